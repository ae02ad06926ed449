package dev.weft.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.cli.PromText;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Reads everything an {@link ExperimentResult} reports besides the load, just before and just after the measured
 * window: each provider's {@code served} counter (its {@code /stats}), the proxies', the control plane's and the
 * example apps' CPU time (and the proxies' JIT compilers' share of it), the proxies' peak memory, the machine's CPU
 * time, the bytes on the proxies' link and the TLS handshakes Weft's sidecars made on it ({@value #HANDSHAKES} from
 * their {@code /metrics}).
 *
 * <p>Thread: called by the load generator on the thread that runs the load, before and after the window; read
 * afterwards on the same thread.
 */
final class WindowSampler implements LoadGenerator.PhaseListener {
    /** Counted by both ends of each mesh connection's handshake, accepted ({@code side="server"}) and dialled. */
    static final String HANDSHAKES = "weft_tls_handshakes_total";
    private final Topology topology;
    private final long controlPid;
    private final List<Long> appPids;
    private final HttpProbe http;
    private final Consumer<String> say;
    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, Long> servedBefore = new LinkedHashMap<>();
    private final Map<String, Long> servedAfter = new LinkedHashMap<>();
    private final long[] cpuBefore;
    private final long[] cpuAfter;
    private final long[] jitBefore;
    private final long[] jitAfter;
    private final long[] peakRss;
    private Map<String, LinkBytes.Counters> linkBefore;
    private Map<String, LinkBytes.Counters> linkAfter;
    private ProcStats.MachineCpu machineBefore;
    private ProcStats.MachineCpu machineAfter;
    private double loadAverage;
    private long controlCpuBefore;
    private long controlCpuAfter;
    private long appsCpuBefore;
    private long appsCpuAfter;
    private double handshakesBefore = Double.NaN;
    private double handshakesAfter = Double.NaN;

    /**
     * @param controlPid the control plane's process, or -1 when the data plane runs none
     * @param appPids    the example apps' processes (providers, consumer)
     * @param say        where a provider whose stats cannot be read is reported
     */
    WindowSampler(Topology topology, long controlPid, List<Long> appPids, HttpProbe http, Consumer<String> say) {
        this.topology = topology;
        this.controlPid = controlPid;
        this.appPids = List.copyOf(appPids);
        this.http = http;
        this.say = say;
        int proxies = topology.proxies().size();
        this.cpuBefore = new long[proxies];
        this.cpuAfter = new long[proxies];
        this.jitBefore = new long[proxies];
        this.jitAfter = new long[proxies];
        this.peakRss = new long[proxies];
    }

    @Override
    public void measurementStarting() {
        // The slow reads first, so the CPU counters are taken as close to the window's start as possible.
        servedBefore.putAll(servedByProvider());
        handshakesBefore = handshakes();
        linkBefore = LinkBytes.snapshot(topology.linkPorts());
        loadAverage = ProcStats.loadAverage();
        machineBefore = ProcStats.machineCpu();
        for (int i = 0; i < cpuBefore.length; i++) {
            jitBefore[i] = ProcStats.treeJitCpuNanos(topology.proxies().get(i).pid());
            cpuBefore[i] = ProcStats.treeCpuNanos(topology.proxies().get(i).pid());
        }
        controlCpuBefore = controlPid < 0 ? 0 : ProcStats.treeCpuNanos(controlPid);
        appsCpuBefore = appsCpu();
    }

    @Override
    public void measurementEnded() {
        for (int i = 0; i < cpuAfter.length; i++) {
            cpuAfter[i] = ProcStats.treeCpuNanos(topology.proxies().get(i).pid());
            jitAfter[i] = ProcStats.treeJitCpuNanos(topology.proxies().get(i).pid());
        }
        controlCpuAfter = controlPid < 0 ? 0 : ProcStats.treeCpuNanos(controlPid);
        appsCpuAfter = appsCpu();
        machineAfter = ProcStats.machineCpu();
        for (int i = 0; i < peakRss.length; i++) {
            peakRss[i] = ProcStats.treePeakRssBytes(topology.proxies().get(i).pid());
        }
        linkAfter = LinkBytes.snapshot(topology.linkPorts());
        servedAfter.putAll(servedByProvider());
        handshakesAfter = handshakes();
    }

    ExperimentResult.Figures figures() {
        List<ExperimentResult.ProxyFigure> proxies = new ArrayList<>();
        for (int i = 0; i < cpuBefore.length; i++) {
            DataPlane.Proxy p = topology.proxies().get(i);
            boolean consumerSide = i == cpuBefore.length - 1;
            proxies.add(new ExperimentResult.ProxyFigure(p.name(), consumerSide, p.pid(),
                    Duration.ofNanos(Math.max(0, cpuAfter[i] - cpuBefore[i])),
                    Duration.ofNanos(Math.max(0, jitAfter[i] - jitBefore[i])), peakRss[i], p.ready()));
        }
        LinkBytes.Delta link = topology.linkPorts().isEmpty() ? LinkBytes.Delta.UNKNOWN
                : LinkBytes.delta(linkBefore, linkAfter);
        double busy = machineBefore == null || machineAfter == null ? Double.NaN
                : machineAfter.busySince(machineBefore);
        Duration controlCpu = controlPid < 0 ? null : Duration.ofNanos(Math.max(0, controlCpuAfter - controlCpuBefore));
        Duration appsCpu = appPids.isEmpty() ? null : Duration.ofNanos(Math.max(0, appsCpuAfter - appsCpuBefore));
        return new ExperimentResult.Figures(proxies, busy, loadAverage, link.toProviders(), link.fromProviders(),
                link.closed(), controlCpu, appsCpu, handshakesAfter - handshakesBefore);
    }

    private long appsCpu() {
        long sum = 0;
        for (long pid : appPids) {
            sum += ProcStats.treeCpuNanos(pid);
        }
        return sum;
    }

    /** Each provider's share of what the providers served in the window, next to its weight's share. */
    List<ExperimentResult.ProviderShare> shares() {
        int weights = topology.providers().stream().mapToInt(p -> p.spec().weight()).sum();
        Map<String, Long> delta = new LinkedHashMap<>();
        long total = 0;
        boolean allKnown = true;
        for (Topology.RunningProvider provider : topology.providers()) {
            String name = provider.spec().name();
            long b = servedBefore.getOrDefault(name, -1L);
            long a = servedAfter.getOrDefault(name, -1L);
            long served = b < 0 || a < 0 ? -1 : a - b;
            delta.put(name, served);
            if (served < 0) {
                allKnown = false;
            } else {
                total += served;
            }
        }
        List<ExperimentResult.ProviderShare> shares = new ArrayList<>();
        for (Topology.RunningProvider provider : topology.providers()) {
            long served = delta.get(provider.spec().name());
            double share = !allKnown || served < 0 || total == 0 ? Double.NaN : (double) served / total;
            shares.add(new ExperimentResult.ProviderShare(provider.spec().name(), provider.spec().weight(), served,
                    share, (double) provider.spec().weight() / weights));
        }
        return shares;
    }

    /**
     * {@value #HANDSHAKES} summed over every proxy with an admin port (Weft's sidecars), every side and result; NaN
     * when there is none, when one does not answer, or when none exports the metric (the peers; sidecars with
     * {@code --metrics off}).
     */
    private double handshakes() {
        double sum = 0;
        boolean seen = false;
        for (DataPlane.Proxy proxy : topology.proxies()) {
            if (proxy.admin() <= 0) {
                continue;
            }
            URI metrics = URI.create("http://" + Experiment.LOOPBACK + ":" + proxy.admin() + "/metrics");
            try {
                HttpResponse<String> response = http.get(metrics, Duration.ofSeconds(5));
                if (response.statusCode() != 200) {
                    return Double.NaN;
                }
                for (PromText.Sample sample : PromText.parse(response.body())) {
                    if (sample.name().equals(HANDSHAKES)) {
                        sum += sample.value();
                        seen = true;
                    }
                }
            } catch (IOException e) {
                say.accept("cannot read GET " + metrics + " of " + proxy.name() + ": " + e.getMessage()
                        + "; TLS handshakes are reported as n/a");
                return Double.NaN;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Double.NaN;
            }
        }
        return seen ? sum : Double.NaN;
    }

    /** Each provider's {@code served} counter, -1 where {@code /stats} could not be read. */
    private Map<String, Long> servedByProvider() {
        Map<String, Long> served = new LinkedHashMap<>();
        for (Topology.RunningProvider provider : topology.providers()) {
            served.put(provider.spec().name(), served(provider));
        }
        return served;
    }

    /** Retried, with a generous timeout: a provider under full load on a busy machine can be slow to answer. */
    private long served(Topology.RunningProvider provider) {
        URI stats = URI.create("http://" + Experiment.LOOPBACK + ":" + provider.appPort() + "/stats");
        String problem = "no attempt";
        for (int attempt = 1; attempt <= 3; attempt++) {
            try {
                HttpResponse<String> response = http.get(stats, Duration.ofSeconds(5));
                JsonNode servedNode = response.statusCode() == 200 ? json.readTree(response.body()).get("served") : null;
                if (servedNode != null && servedNode.canConvertToLong()) {
                    return servedNode.asLong();
                }
                problem = "answered " + response.statusCode() + " without a numeric 'served'";
            } catch (IOException e) {
                problem = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return -1;
            }
        }
        say.accept("cannot read GET " + stats + " of provider " + provider.spec().name() + ": " + problem
                + "; its share is reported as n/a");
        return -1;
    }
}
