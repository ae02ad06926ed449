package dev.weft.control.diagnose;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What one time range (the window, or the baseline) holds, aggregated: per unit (a service, or one endpoint of it),
 * per caller → callee edge, and per service. Filled by {@link Analysis} on one thread.
 */
final class Period {
    /** A service ({@code endpoint} null: all its instances together) or one of its instances. */
    record Unit(String service, String endpoint) {}

    record Edge(String caller, String callee) {}

    /** The SERVER spans of one unit: its own (self) time, its inbound queue, the errors it originated. */
    static final class UnitStats {
        final Samples self = new Samples();
        final Samples queue = new Samples();
        long requests;
        long ownErrors;
        String endpointId;
        final Map<String, Long> errorKinds = new TreeMap<>();
        final List<String> errorTraces = new ArrayList<>(5);
        /** The slowest self times seen, with their traces: {@link #SLOWEST} at most, unordered. */
        final long[] slowSelf = new long[SLOWEST];
        final String[] slowTrace = new String[SLOWEST];

        static final int SLOWEST = 5;

        void ownError(String kind, String traceId) {
            ownErrors++;
            errorKinds.merge(kind, 1L, Long::sum);
            if (errorTraces.size() < SLOWEST && !errorTraces.contains(traceId)) {
                errorTraces.add(traceId);
            }
        }

        void offerSlow(long selfMicros, String traceId) {
            int min = 0;
            for (int i = 0; i < SLOWEST; i++) {
                if (slowTrace[i] == null) {
                    slowSelf[i] = selfMicros;
                    slowTrace[i] = traceId;
                    return;
                }
                if (traceId.equals(slowTrace[i])) {
                    slowSelf[i] = Math.max(slowSelf[i], selfMicros);
                    return;
                }
                if (slowSelf[i] < slowSelf[min]) {
                    min = i;
                }
            }
            if (selfMicros > slowSelf[min]) {
                slowSelf[min] = selfMicros;
                slowTrace[min] = traceId;
            }
        }

        /** The traces of the slowest self times, slowest first. */
        List<String> slowestTraces() {
            List<Integer> idx = new ArrayList<>();
            for (int i = 0; i < SLOWEST; i++) {
                if (slowTrace[i] != null) {
                    idx.add(i);
                }
            }
            idx.sort((a, b) -> Long.compare(slowSelf[b], slowSelf[a]));
            return idx.stream().map(i -> slowTrace[i]).toList();
        }
    }

    /** The CLIENT spans of one edge, at the caller's sidecar: queue time and the calls refused there at once. */
    static final class EdgeStats {
        final Samples queue = new Samples();
        long requests;
        long shed;
        final Map<String, Long> shedKinds = new TreeMap<>();
    }

    /** A service as its callers see it: its latency and errors, and what its own sidecar shed. */
    static final class ServiceStats {
        /** SERVER span durations (the service's latency as its callers' sidecars deliver to it). */
        final Samples serverDuration = new Samples();
        long serverRequests;
        long serverErrors;
        /** Root CLIENT spans: an entry service has no SERVER span, its latency is that of the calls it starts. */
        final Samples rootDuration = new Samples();
        long rootRequests;
        long rootErrors;
        long inboundShed;
        final Map<String, Long> shedKinds = new TreeMap<>();

        Samples duration() {
            return serverRequests > 0 ? serverDuration : rootDuration;
        }

        long requests() {
            return serverRequests > 0 ? serverRequests : rootRequests;
        }

        long errors() {
            return serverRequests > 0 ? serverErrors : rootErrors;
        }
    }

    final Map<Unit, UnitStats> units = new HashMap<>();
    final Map<Edge, EdgeStats> edges = new HashMap<>();
    final Map<String, ServiceStats> services = new TreeMap<>();
    final Set<String> traces = new HashSet<>();

    UnitStats unit(String service, String endpoint) {
        return units.computeIfAbsent(new Unit(service, endpoint), k -> new UnitStats());
    }

    EdgeStats edge(String caller, String callee) {
        return edges.computeIfAbsent(new Edge(caller, callee), k -> new EdgeStats());
    }

    ServiceStats service(String service) {
        return services.computeIfAbsent(service, k -> new ServiceStats());
    }
}
