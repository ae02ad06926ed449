package dev.weft.registry.etcd;

import dev.weft.registry.Endpoint;
import dev.weft.registry.EndpointListener;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records every list a watch delivers, in order, so tests can check the whole history and not only the end. */
final class Recorder implements EndpointListener {
    final List<List<Endpoint>> history = new CopyOnWriteArrayList<>();

    @Override
    public void onEndpoints(String service, List<Endpoint> endpoints) {
        history.add(endpoints);
    }

    /** Ids of the last list, or null before the first. */
    List<String> ids() {
        return history.isEmpty() ? null : ids(history.getLast());
    }

    static List<String> ids(List<Endpoint> endpoints) {
        return endpoints.stream().map(Endpoint::id).toList();
    }

    /** Every list delivered, as ids. */
    List<List<String>> idHistory() {
        return history.stream().map(Recorder::ids).toList();
    }
}
