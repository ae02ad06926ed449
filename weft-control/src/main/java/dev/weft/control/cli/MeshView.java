package dev.weft.control.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Finds the mesh's sidecars and reads them, for {@code ./weft stat} and {@code ./weft top}: through a
 * {@code weft://} control plane (each registered endpoint carries its sidecar's admin address in its metadata) or
 * from an explicit list of admin addresses.
 */
public final class MeshView implements AutoCloseable {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** Endpoint metadata key the sidecar registers its admin address under (dev.weft.dataplane.Sidecar). */
    public static final String ADMIN_METADATA = "admin";

    /** A sidecar to scrape; {@code service} is null until its metrics name it. */
    public record Target(String service, String instance, String admin) {}

    private final Http http = new Http();
    private final ExecutorService scrapers = Executors.newVirtualThreadPerTaskExecutor();

    /**
     * Sidecars registered with the control plane at {@code registry}, plus notes on those that cannot be read.
     *
     * @param authorization the operator token's header, or null (enough from loopback to a local control plane)
     */
    List<Target> discover(String registry, String authorization, List<String> notes) throws IOException {
        if (!dev.weft.registry.weft.ControlPlaneUrl.isControlPlane(registry) && !registry.startsWith("http")) {
            throw new IllegalArgumentException("cannot list sidecars through '" + registry + "': stat and top discover"
                    + " them through a weft:// control plane; with another registry pass --admin HOST:PORT for each"
                    + " sidecar, or use --source spans");
        }
        String base = Http.base(registry);
        http.trust(registry);
        List<Target> targets = new ArrayList<>();
        JsonNode services = MAPPER.readTree(http.get(URI.create(base + "/v1/services"), authorization))
                .path("services");
        for (JsonNode s : services) {
            String name = s.path("name").asText();
            JsonNode snapshot = MAPPER.readTree(http.get(URI.create(base + "/v1/services/"
                    + URLEncoder.encode(name, StandardCharsets.UTF_8)), authorization));
            for (JsonNode e : snapshot.path("endpoints")) {
                String admin = e.path("metadata").path(ADMIN_METADATA).asText("");
                String id = e.path("id").asText();
                if (admin.isEmpty()) {
                    notes.add(name + "/" + id + " registered no admin address (an older sidecar?): not shown");
                } else {
                    targets.add(new Target(name, id, admin));
                }
            }
        }
        return targets;
    }

    static List<Target> explicit(List<String> admins) {
        List<Target> targets = new ArrayList<>();
        for (String a : admins) {
            targets.add(new Target(null, a, a));
        }
        return targets;
    }

    /** Every target's /metrics, in parallel; unreachable ones are left out with a note. */
    public List<MeshStats.Scrape> scrape(List<Target> targets, List<String> notes) {
        List<Future<String>> bodies = new ArrayList<>();
        for (Target t : targets) {
            bodies.add(scrapers.submit(() -> http.get(URI.create(Http.base(t.admin()) + "/metrics"))));
        }
        List<MeshStats.Scrape> scrapes = new ArrayList<>();
        for (int i = 0; i < targets.size(); i++) {
            Target t = targets.get(i);
            try {
                List<PromText.Sample> samples = PromText.parse(bodies.get(i).get());
                String service = t.service() != null ? t.service() : serviceOf(samples);
                scrapes.add(new MeshStats.Scrape(service, t.instance(), samples));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (Exception e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                notes.add("could not read " + t.instance() + " at " + t.admin() + ": " + cause.getMessage());
            }
        }
        return scrapes;
    }

    /** One page of a sidecar's admin listener (e.g. {@code /config}), with {@link Http}'s timeouts. */
    public String adminPage(String admin, String path) throws IOException {
        return http.get(URI.create(Http.base(admin) + path));
    }

    private static String serviceOf(List<PromText.Sample> samples) {
        for (PromText.Sample s : samples) {
            if (s.name().equals("weft_requests_total") && !s.label("service").isEmpty()) {
                return s.label("service");
            }
        }
        return "?";
    }

    /** Spans of the last {@code window} from a collector (control plane or Zipkin). */
    List<List<TraceSpan>> traces(String collector, String authorization, Duration window, int limit)
            throws IOException {
        String base = Http.base(collector);
        http.trust(collector);
        return TraceSpan.parseTraces(http.get(URI.create(base + "/api/v2/traces?limit=" + limit + "&lookback="
                + window.toMillis() + "&endTs=" + System.currentTimeMillis()), authorization));
    }

    @Override
    public void close() {
        scrapers.shutdownNow();
        http.close();
    }
}
