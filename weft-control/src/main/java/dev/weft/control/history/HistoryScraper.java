package dev.weft.control.history;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.ControlBackend;
import dev.weft.control.cli.MeshStats;
import dev.weft.control.cli.MeshView;
import dev.weft.control.cli.PromText;
import dev.weft.registry.Endpoint;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Every {@link #interval} (5 s by default), reads every registered sidecar's {@code /metrics} and records the
 * mesh-wide aggregates in a {@link History}: per service (what its sidecars served inbound), per edge (what callers'
 * sidecars sent to a callee) and per endpoint (one registered instance's inbound), each with rate, success rate,
 * p50/p90/p99, in flight and, for services and endpoints, the mesh tax. The arithmetic and the scraping are
 * {@code ./weft stat}'s ({@link MeshStats}, {@link MeshView}), so the dashboard and the CLI agree.
 *
 * <p>Thread: one daemon thread, "weft-control-history", never an event loop. Sidecars are found through the
 * {@link ControlBackend} (each registration carries its sidecar's admin address) with a bounded wait, and read in
 * parallel on virtual threads with {@code MeshView}'s timeouts (2 s to connect, 5 s per answer), so one stuck sidecar
 * delays a tick but never blocks the API. Every {@link #CONFIG_EVERY} ticks each sidecar's {@code /config} is read too,
 * for the policy status it reports (applied, or rejected and why).
 */
public final class HistoryScraper implements AutoCloseable {
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(5);
    /** Sidecars read per tick at most: beyond, the rest are named in the notes and left out. */
    public static final int MAX_SIDECARS = 5000;
    static final int CONFIG_EVERY = 6;
    private static final System.Logger LOG = System.getLogger(HistoryScraper.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration STORE_WAIT = Duration.ofSeconds(3);

    /** One registered sidecar as the last tick saw it; {@code ready} null and {@code error} set when unreadable. */
    public record Sidecar(String service, String instance, String address, String admin, Boolean ready,
                          double uptimeSeconds, String version, String error) {}

    /** What the last tick found: the rows shown on the map and the sidecars page. */
    public record Latest(long epochMillis, double windowSeconds, List<MeshStats.Row> services,
                         List<MeshStats.Row> edges, Map<String, List<MeshStats.Row>> endpointsByService,
                         List<Sidecar> sidecars, Map<String, JsonNode> policyStatus, List<String> notes) {
        static final Latest EMPTY = new Latest(0, 0, List.of(), List.of(), Map.of(), List.of(), Map.of(),
                List.of("no data yet: the first figures come two readings after start (10 s by default)"));
    }

    private final ControlBackend store;
    private final History history;
    private final Duration interval;
    private final MeshView view = new MeshView();
    private final ScheduledExecutorService thread;
    private final ExecutorService configReaders = Executors.newVirtualThreadPerTaskExecutor();
    private Map<String, MeshStats.Scrape> previous = Map.of();
    private long previousNanos;
    private long ticks;
    private Map<String, JsonNode> policyStatus = Map.of();
    private volatile Latest latest = Latest.EMPTY;
    private volatile Map<String, String> adminByInstance = Map.of();

    public HistoryScraper(ControlBackend store, History history, Duration interval) {
        this.store = store;
        this.history = history;
        this.interval = interval;
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "weft-control-history");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts reading every {@link #interval}; with a zero interval reads nothing and says so in the notes. */
    public HistoryScraper start() {
        long every = interval.toMillis();
        if (every == 0) {
            latest = new Latest(0, 0, List.of(), List.of(), Map.of(), List.of(), Map.of(),
                    List.of("the history is off (./weft control --history-interval 0s): no charts, no map figures"));
            return this;
        }
        // The first reading one interval after start, not at once: a control plane starting (or restarting) is busy
        // enough with sidecars re-registering, and charts need two readings anyway.
        thread.scheduleAtFixedRate(this::tickSafely, every, every, TimeUnit.MILLISECONDS);
        return this;
    }

    public History history() {
        return history;
    }

    public Latest latest() {
        return latest;
    }

    public Duration interval() {
        return interval;
    }

    /**
     * A registered sidecar's admin address by instance id, or null: the only addresses {@code /v1/ui} will read a
     * {@code /config} from (an allow-list, so the control plane cannot be used to reach arbitrary hosts).
     */
    public String adminOf(String instance) {
        return adminByInstance.get(instance);
    }

    /** Reads one sidecar's {@code /config} off the event loop; completes with its JSON text. */
    public CompletableFuture<String> readConfig(String admin) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return view.adminPage(admin, "/config");
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, configReaders);
    }

    private void tickSafely() {
        try {
            tick();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // A tick that failed (a store that did not answer) leaves a gap in the charts; the next one tries again.
            // The pages say why; the log says it once per change of reason, not every 5 s through an outage.
            String reason = "the last reading failed: " + e.getMessage();
            Latest l = latest;
            if (!l.notes().contains(reason)) {
                LOG.log(System.Logger.Level.WARNING, "dashboard history: " + reason);
            }
            latest = new Latest(l.epochMillis(), l.windowSeconds(), l.services(), l.edges(), l.endpointsByService(),
                    l.sidecars(), l.policyStatus(), List.of(reason));
        }
    }

    /** One reading: discover, scrape, compute, record. On the history thread only. */
    private void tick() throws InterruptedException {
        if (!store.connectivity().connected()) {
            // The store is away (etcd down): asking it would only add to the API's error count; the charts show a
            // gap and the pages say why until it answers the API again.
            throw new IllegalStateException("the registry store is unavailable (" + store.connectivity().lastError()
                    + ")");
        }
        List<String> notes = new ArrayList<>();
        Map<String, Endpoint> registered = new LinkedHashMap<>();
        List<MeshView.Target> targets = discover(notes, registered);
        List<MeshStats.Scrape> scrapes = view.scrape(targets, notes);
        long now = System.nanoTime();
        long epochMillis = System.currentTimeMillis();
        Map<String, MeshStats.Scrape> byInstance = new LinkedHashMap<>();
        for (MeshStats.Scrape s : scrapes) {
            byInstance.put(s.instance(), s);
        }
        if ((ticks++ % CONFIG_EVERY) == 0) {
            policyStatus = readPolicyStatus(targets);
        }
        List<Sidecar> sidecars = sidecars(registered, byInstance);
        Map<String, String> admins = new HashMap<>();
        targets.forEach(t -> admins.put(t.instance(), t.admin()));
        adminByInstance = Map.copyOf(admins);
        if (previous.isEmpty()) {
            // The first scrape is only a baseline: rates need two.
            previous = byInstance;
            previousNanos = now;
            latest = new Latest(epochMillis, 0, List.of(), List.of(), Map.of(), sidecars, policyStatus,
                    List.of("no rates yet: the first figures come at the next scrape"));
            return;
        }
        double seconds = (now - previousNanos) / 1e9;
        // Only sidecars seen in both scrapes: a new one's counters since its start are not this window's traffic.
        List<MeshStats.Scrape> before = new ArrayList<>();
        List<MeshStats.Scrape> after = new ArrayList<>();
        for (MeshStats.Scrape s : scrapes) {
            MeshStats.Scrape p = previous.get(s.instance());
            if (p != null) {
                before.add(p);
                after.add(s);
            }
        }
        MeshStats.Report mesh = MeshStats.fromScrapes(before, after, seconds, notes);
        Map<String, List<MeshStats.Row>> endpoints = new TreeMap<>();
        for (int i = 0; i < after.size(); i++) {
            MeshStats.Scrape s = after.get(i);
            MeshStats.Report one = MeshStats.fromScrapes(List.of(before.get(i)), List.of(s), seconds, new ArrayList<>());
            for (MeshStats.Row r : one.services()) {
                endpoints.computeIfAbsent(s.service(), k -> new ArrayList<>()).add(new MeshStats.Row(s.instance(),
                        1, r.rps(), r.success(), r.p50Millis(), r.p90Millis(), r.p99Millis(), r.inFlight(),
                        r.cpuMicrosPerRequest(), r.heapBytesPerRequest()));
            }
        }
        history.beginTick(epochMillis);
        mesh.services().forEach(r -> history.put(History.Kind.SERVICE, r.name(), values(r)));
        mesh.edges().forEach(r -> history.put(History.Kind.EDGE, r.name(), values(r)));
        endpoints.forEach((service, rows) -> rows.forEach(r ->
                history.put(History.Kind.ENDPOINT, service + "/" + r.name(), values(r))));
        if (history.droppedSeries() > 0) {
            notes.add(history.droppedSeries() + " series not kept: the history holds at most " + history.maxSeries());
        }
        previous = byInstance;
        previousNanos = now;
        latest = new Latest(epochMillis, seconds, mesh.services(), mesh.edges(), endpoints, sidecars, policyStatus,
                List.copyOf(notes));
    }

    /** A row as the history keeps it, in {@link History#METRIC_NAMES} order (in flight unknown: NaN). */
    public static double[] values(MeshStats.Row r) {
        return new double[]{r.rps(), r.success(), r.p50Millis(), r.p90Millis(), r.p99Millis(),
                r.inFlight() < 0 ? Double.NaN : r.inFlight(), r.cpuMicrosPerRequest(), r.heapBytesPerRequest()};
    }

    private List<MeshView.Target> discover(List<String> notes, Map<String, Endpoint> registered)
            throws InterruptedException {
        List<MeshView.Target> targets = new ArrayList<>();
        ControlBackend.ServiceList services = await(store.services());
        List<CompletableFuture<ControlBackend.ServiceSnapshot>> snapshots = new ArrayList<>();
        for (ControlBackend.ServiceSummary s : services.services()) {
            snapshots.add(store.snapshot(s.name()));
        }
        for (CompletableFuture<ControlBackend.ServiceSnapshot> f : snapshots) {
            for (Endpoint e : await(f).endpoints()) {
                String admin = e.metadata().getOrDefault(MeshView.ADMIN_METADATA, "");
                registered.put(e.id(), e);
                if (admin.isEmpty()) {
                    continue;
                }
                if (targets.size() >= MAX_SIDECARS) {
                    notes.add("more than " + MAX_SIDECARS + " sidecars registered: the rest are not read");
                    return targets;
                }
                targets.add(new MeshView.Target(e.service(), e.id(), admin));
            }
        }
        return targets;
    }

    private static <T> T await(CompletableFuture<T> f) throws InterruptedException {
        try {
            return f.get(STORE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("the registry store did not answer: " + e, e);
        }
    }

    private static List<Sidecar> sidecars(Map<String, Endpoint> registered, Map<String, MeshStats.Scrape> scrapes) {
        List<Sidecar> out = new ArrayList<>();
        registered.forEach((id, e) -> {
            String admin = e.metadata().getOrDefault(MeshView.ADMIN_METADATA, "");
            String version = e.metadata().getOrDefault("version", null);
            String address = e.host() + ":" + e.port();
            MeshStats.Scrape s = scrapes.get(id);
            if (s == null) {
                out.add(new Sidecar(e.service(), id, address, admin, null, Double.NaN, version,
                        admin.isEmpty() ? "registered no admin address" : "could not read " + admin + "/metrics"));
                return;
            }
            Boolean ready = null;
            double uptime = Double.NaN;
            for (PromText.Sample x : s.samples()) {
                if (x.name().equals("weft_ready")) {
                    ready = x.value() == 1;
                } else if (x.name().equals("weft_uptime_seconds")) {
                    uptime = x.value();
                }
            }
            out.add(new Sidecar(e.service(), id, address, admin, ready, uptime, version, null));
        });
        return out;
    }

    /** Each sidecar's {@code policies} section of /config, read in parallel; unreadable ones are left out. */
    private Map<String, JsonNode> readPolicyStatus(List<MeshView.Target> targets) throws InterruptedException {
        Map<String, CompletableFuture<String>> pages = new LinkedHashMap<>();
        for (MeshView.Target t : targets) {
            pages.put(t.instance(), readConfig(t.admin()));
        }
        Map<String, JsonNode> out = new TreeMap<>();
        for (Map.Entry<String, CompletableFuture<String>> p : pages.entrySet()) {
            try {
                JsonNode policies = JSON.readTree(p.getValue().get(10, TimeUnit.SECONDS)).path("policies");
                if (!policies.isMissingNode()) {
                    out.put(p.getKey(), policies);
                }
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException
                     | java.io.IOException e) {
                // Shown as "unknown" on the policies page; the sidecars page says whether it answers at all.
            }
        }
        return out;
    }

    @Override
    public void close() {
        thread.shutdownNow();
        configReaders.shutdownNow();
        view.close();
    }
}
