package dev.weft.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.cli.PromText;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What the resilience scenarios do to a running {@link Experiment} and read from it, through the surfaces a user
 * has: the providers' {@code POST /fault} and {@code /stats}, SIGKILL, {@code weft apply} as its own process, and
 * each sidecar's {@code /config} and {@code /metrics}, found through the registry (the admin address every sidecar
 * registers as endpoint metadata).
 *
 * <p>Threads: any; each call blocks its caller for at most a few seconds (every HTTP call has a timeout).
 */
final class MeshControls {
    /** At most this many requests in 50 ms to a dead endpoint count as probes, not as traffic. */
    static final int PROBE_MAX = 2;

    private static final ObjectMapper JSON = new ObjectMapper();
    private final Experiment experiment;
    private final String mainClass;
    private final Consumer<String> say;
    private final HttpClient http;

    /**
     * @param mainClass the main class {@code weft apply} runs with
     * @param say       where progress lines go
     */
    MeshControls(Experiment experiment, String mainClass, HttpClient http, Consumer<String> say) {
        this.experiment = experiment;
        this.mainClass = mainClass;
        this.http = http;
        this.say = say;
    }

    /** {@code POST /fault?QUERY} to a provider app. */
    void fault(String provider, String query) {
        int port = experiment.providerPorts().get(provider);
        try {
            http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/fault?" + query))
                    .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding());
            say.accept("provider " + provider + ": fault " + query);
        } catch (IOException e) {
            // A crash answers nothing: the connection just ends.
            say.accept("provider " + provider + ": fault " + query + " (" + e.getClass().getSimpleName() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void kill9(long pid) {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly); // SIGKILL on Linux
        say.accept("SIGKILL pid " + pid);
    }

    /** The requests a provider app holds now (its {@code /stats}); NaN when it does not answer. */
    double providerInFlight(int port) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/stats"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(r.body()).get("inFlight").asDouble();
        } catch (IOException e) {
            return Double.NaN;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Double.NaN;
        }
    }

    /** Every live sidecar's admin {@code HOST:PORT} for a service, as registered (endpoint metadata "admin"). */
    private List<String> admins(String service) {
        String registry = experiment.registry().replaceFirst("^weft://", "http://");
        try {
            // The operator token: a topology read needs it unless the control plane is local (no --registry etcd).
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(registry + "/v1/services/" + service))
                    .header("Authorization", "Bearer " + Files.readString(experiment.adminTokenFile()).strip())
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
            List<String> out = new ArrayList<>();
            for (JsonNode e : JSON.readTree(r.body()).path("endpoints")) {
                String admin = e.path("metadata").path("admin").asText(null);
                if (admin != null) {
                    out.add(admin);
                }
            }
            return out;
        } catch (IOException e) {
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    /** The /metrics samples of every sidecar of a service. */
    SidecarScrape scrape(String service) {
        List<PromText.Sample> all = new ArrayList<>();
        for (String admin : admins(service)) {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + admin + "/metrics"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                all.addAll(PromText.parse(r.body()));
            } catch (IOException e) {
                // a sidecar just killed: it has nothing more to say
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return new SidecarScrape(all);
    }

    /**
     * When the traffic to an endpoint stopped, told apart from the probes after it.
     *
     * @param movedAway seconds from {@code since} to the end of the last 50 ms with more than
     *                  {@link MeshControls#PROBE_MAX} requests
     * @param probes    requests after that, in windows of at most {@link MeshControls#PROBE_MAX}
     * @param lastProbe seconds from {@code since} to the last of those, NaN if none
     */
    record Quiet(double movedAway, int probes, double lastProbe) {}

    /**
     * Watches the consumer sidecar's requests to one endpoint every 50 ms from {@code since} until {@code until}:
     * when the consumer stopped sending to it (a dead endpoint), and the probes after that.
     *
     * @param labels the series, as label names and values of {@code weft_endpoint_requests_total}
     */
    Quiet timeUntilQuiet(long since, long until, String... labels) throws InterruptedException {
        double last = scrape("consumer").sum("weft_endpoint_requests_total", labels);
        long movedAway = since;
        int probes = 0;
        long lastProbe = 0;
        while (System.nanoTime() < until) {
            TimeUnit.MILLISECONDS.sleep(50);
            double v = scrape("consumer").sum("weft_endpoint_requests_total", labels);
            long now = System.nanoTime();
            if (v - last > PROBE_MAX) {
                movedAway = now;
                probes = 0; // what looked like probes was still traffic
                lastProbe = 0;
            } else if (v > last) {
                probes += (int) (v - last);
                lastProbe = now;
            }
            last = v;
        }
        return new Quiet((movedAway - since) / 1e9, probes, lastProbe == 0 ? Double.NaN : (lastProbe - since) / 1e9);
    }

    /** Runs {@code weft apply} as its own process (as a user would); returns its wall time in seconds. */
    double apply(String name, String yaml) throws InterruptedException {
        try {
            Path file = Files.createTempFile(experiment.runDir(), name, ".yaml");
            Files.writeString(file, yaml);
            List<String> command = ChildJvm.command(List.of(), mainClass, List.of("apply", "-f", file.toString(),
                    "--name", name, "--registry", experiment.registry(),
                    "--admin-token-file", experiment.adminTokenFile().toString()));
            long t0 = System.nanoTime();
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(experiment.runDir().resolve("apply-" + name + ".log").toFile()).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("weft apply " + name + " did not finish within 60 s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("weft apply " + name + " exited " + p.exitValue() + ": "
                        + Files.readString(experiment.runDir().resolve("apply-" + name + ".log")));
            }
            double wall = (System.nanoTime() - t0) / 1e9;
            say.accept("weft apply " + name + " done in " + String.format(Locale.ROOT, "%.2f s", wall));
            return wall;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run weft apply: " + e.getMessage(), e);
        }
    }

    /** Whether every consumer and provider sidecar lists the policy document {@code name} in its /config. */
    boolean allApplied(String name) {
        List<String> admins = new ArrayList<>(admins("consumer"));
        admins.addAll(admins("provider"));
        for (String admin : admins) {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + admin + "/config"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                boolean listed = false;
                for (JsonNode d : JSON.readTree(r.body()).path("policies").path("documents")) {
                    listed |= d.asText().equals(name);
                }
                if (!listed) {
                    return false;
                }
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return !admins.isEmpty();
    }
}
