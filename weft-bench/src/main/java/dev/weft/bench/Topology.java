package dev.weft.bench;

import java.util.List;
import java.util.Set;

/**
 * What an {@link Experiment} started: where the load goes, the provider apps, the proxies and the link between them.
 *
 * @param entryPort where the load goes
 * @param proxies   provider-side proxies, then the consumer-side one
 * @param linkPorts the provider-side proxies' listeners: the link whose bytes are counted
 */
record Topology(int entryPort, List<Topology.RunningProvider> providers, List<DataPlane.Proxy> proxies,
                Set<Integer> linkPorts) {

    /** A provider app and the port it bound. */
    record RunningProvider(Experiment.ProviderSpec spec, int appPort) {}
}
