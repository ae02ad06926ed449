package dev.weft.control.trace;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A bounded span loader for measuring a control plane's span store (not a test): posts sidecar-format Zipkin v2
 * batches at a steady rate, each trace's CLIENT span in one batch and its SERVER span in the next (as two sidecars
 * would send them), then prints what it sent. Usage: {@code SpanLoad URL SPANS_PER_SECOND TOTAL_SPANS [BATCH]}.
 * Measure the control plane's CPU (/proc/PID/stat) and GC log around it.
 */
public final class SpanLoad {
    private SpanLoad() {}

    public static void main(String[] args) throws Exception {
        URI uri = URI.create(args[0]);
        int rate = Integer.parseInt(args[1]);
        long total = Long.parseLong(args[2]);
        int batch = args.length > 3 ? Integer.parseInt(args[3]) : 500;
        int pairs = batch / 2;
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();
        long traceBase = ThreadLocalRandom.current().nextLong() >>> 1;
        long sent = 0;
        long refused = 0;
        long begin = System.nanoTime();
        for (long k = 0; sent < total; k++) {
            StringBuilder sb = new StringBuilder(batch * 900).append('[');
            long now = System.currentTimeMillis() * 1000;
            for (int i = 0; i < pairs; i++) {
                long client = traceBase + k * pairs + i;
                long server = client - pairs;
                sb.append(i == 0 ? "" : ",").append(span(client, "CLIENT", now, i));
                sb.append(',').append(span(server, "SERVER", now - 2000, i));
            }
            byte[] body = sb.append(']').toString().getBytes(StandardCharsets.UTF_8);
            HttpResponse<Void> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body))
                    .build(), HttpResponse.BodyHandlers.discarding());
            if (r.statusCode() != 202) {
                refused += 2L * pairs;
            }
            sent += 2L * pairs;
            long due = begin + (long) (sent * 1e9 / rate);
            long wait = due - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            }
        }
        double secs = (System.nanoTime() - begin) / 1e9;
        System.out.printf("sent %d spans in %.1f s (%.0f/s), refused %d%n", sent, secs, sent / secs, refused);
        http.shutdownNow();
    }

    /** One span as a sidecar's Zipkin encoder writes it (SpanEncoder.Zipkin), about 800 bytes. */
    private static String span(long trace, String kind, long ts, int i) {
        boolean client = kind.equals("CLIENT");
        String traceId = String.format("%016x%016x", trace * 31, trace);
        String id = String.format("%016x", trace * 2 + (client ? 0 : 1));
        long dur = 900 + (i * 37 % 500);
        return "{\"traceId\":\"" + traceId + "\""
                + (client ? "" : ",\"parentId\":\"" + String.format("%016x", trace * 2) + "\"")
                + ",\"id\":\"" + id + "\",\"kind\":\"" + kind + "\",\"name\":\"post\",\"timestamp\":" + ts
                + ",\"duration\":" + dur
                + ",\"localEndpoint\":{\"serviceName\":\"" + (client ? "consumer" : "provider") + "\"}"
                + ",\"remoteEndpoint\":{" + (client ? "\"serviceName\":\"provider\"," : "")
                + "\"ipv4\":\"127.0.0.1\",\"port\":" + (client ? 7001 : 41234 + i) + "}"
                + ",\"annotations\":[{\"timestamp\":" + (ts + 12) + ",\"value\":\"admitted\"}"
                + (client ? ",{\"timestamp\":" + (ts + 30) + ",\"value\":\"connected\"}" : "")
                + ",{\"timestamp\":" + (ts + 45) + ",\"value\":\"sent\"},{\"timestamp\":" + (ts + dur - 20)
                + ",\"value\":\"first-byte\"}]"
                + ",\"tags\":{\"http.method\":\"POST\",\"http.path\":\"/\",\"http.status_code\":\"200\""
                + ",\"weft.direction\":\"" + (client ? "outbound" : "inbound") + "\",\"weft.route\":\"default\""
                + (client ? ",\"weft.endpoint\":\"provider-large-1\",\"weft.endpoint.address\":\"127.0.0.1:7001\"" : "")
                + ",\"weft.peer\":\"/127.0.0.1:" + (41234 + i) + "\",\"weft.bytes_in\":\"64\",\"weft.bytes_out\":\"128\"}}";
    }
}
