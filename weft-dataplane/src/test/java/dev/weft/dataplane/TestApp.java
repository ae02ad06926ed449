package dev.weft.dataplane;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;

/**
 * The application behind a provider sidecar in tests: the JDK's HTTP server on virtual threads, on a port the OS
 * picks. Routes: /caller (answers the x-weft-caller it was sent, "-" for none), /slow?ms=N, /hold (answers once the
 * test calls {@link #release()}), /big?bytes=N (a streamed answer of N bytes), each also under a longer path
 * (/slow/mine?ms=N), and anything else echoes (answers the request's byte count, CRC32, method and target). So each
 * test's requests can have targets of their own: the app records, by exact method and target, how many arrived and
 * the header fields of the last one ({@link #arrivals}, {@link #headersOf}). It also records the highest number of
 * requests it had in flight.
 */
final class TestApp implements AutoCloseable {
    final HttpServer server;
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    final AtomicInteger served = new AtomicInteger();
    /** Of {@link #served}, the sidecar's own health checks (User-Agent weft-health-check). */
    final AtomicInteger healthChecks = new AtomicInteger();
    /**
     * The header fields (names lower-cased) of the last request to each method and target ("POST /echo?x"), recorded
     * on arrival: a test reads what its own request carried, which no other request can overwrite (a previous test's
     * request that reaches the app late, a retry, a health check). Read it with {@link #headersOf}.
     */
    private final Map<String, Map<String, List<String>>> headersByTarget = new ConcurrentHashMap<>();
    /** Requests served by the x-weft-caller they came with ("-" for none): what reached the app, by caller. */
    final Map<String, AtomicInteger> servedByCaller = new ConcurrentHashMap<>();
    /**
     * Requests that reached the app by method and target ("POST /echo?x"), counted on arrival: a test asks whether one
     * exact request got through without racing the other tests' answers, which {@link #served} counts after writing.
     */
    final Map<String, AtomicInteger> arrived = new ConcurrentHashMap<>();
    /**
     * Requests that reached the app, the sidecar's health checks left out, counted on arrival: whether anything a test
     * sent got through, which neither a health check at any moment nor an answer still being written can change.
     */
    final AtomicInteger arrivedNotHealthChecks = new AtomicInteger();
    /** When non-zero, every answer has this status (a failing instance, for resilience tests). */
    volatile int forcedStatus;
    /** Header fields sent with every {@link #forcedStatus} answer (what an app may claim, for trust tests). */
    final Map<String, String> forcedHeaders = new ConcurrentHashMap<>();
    /**
     * Opened by {@link #release()}: until then /hold requests wait (a minute at most), so a test keeps the app's slots
     * taken for exactly as long as it needs them instead of a guessed time.
     */
    private final CountDownLatch held = new CountDownLatch(1);

    TestApp() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 1024);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", this::handle);
        server.start();
    }

    /** Lets every /hold request answer, those waiting and those to come. */
    void release() {
        held.countDown();
    }

    InetSocketAddress address() {
        return server.getAddress();
    }

    /** How many requests to exactly this method and target ("GET /echo?n=1") have reached the app so far. */
    int arrivals(String methodAndTarget) {
        AtomicInteger n = arrived.get(methodAndTarget);
        return n == null ? 0 : n.get();
    }

    /** The header fields of the last request to this method and target; fails if none has reached the app. */
    Map<String, List<String>> headersOf(String methodAndTarget) {
        Map<String, List<String>> h = headersByTarget.get(methodAndTarget);
        if (h == null) {
            throw new AssertionError("no request '" + methodAndTarget + "' reached the app; it saw "
                    + headersByTarget.keySet());
        }
        return h;
    }

    private void handle(HttpExchange ex) throws IOException {
        int n = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(n, Math::max);
        boolean healthCheck = "weft-health-check".equals(ex.getRequestHeaders().getFirst("User-Agent"));
        try {
            String target = ex.getRequestMethod() + " " + ex.getRequestURI();
            Map<String, List<String>> headers = new HashMap<>();
            ex.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), List.copyOf(v)));
            headersByTarget.put(target, Map.copyOf(headers)); // before the count: who awaits the count sees them
            String caller = ex.getRequestHeaders().getFirst("x-weft-caller");
            servedByCaller.computeIfAbsent(caller == null ? "-" : caller, c -> new AtomicInteger()).incrementAndGet();
            arrived.computeIfAbsent(target, t -> new AtomicInteger()).incrementAndGet();
            if (!healthCheck) {
                arrivedNotHealthChecks.incrementAndGet();
            }
            String path = ex.getRequestURI().getPath();
            String q = ex.getRequestURI().getQuery();
            long count = 0;
            CRC32 crc = new CRC32();
            try (InputStream in = ex.getRequestBody()) {
                byte[] buf = new byte[64 * 1024];
                int r;
                while ((r = in.read(buf)) > 0) {
                    crc.update(buf, 0, r);
                    count += r;
                }
            }
            if (forcedStatus != 0) {
                byte[] err = ("forced " + forcedStatus).getBytes(StandardCharsets.UTF_8);
                forcedHeaders.forEach((k, v) -> ex.getResponseHeaders().set(k, v));
                ex.sendResponseHeaders(forcedStatus, err.length);
                try (OutputStream out = ex.getResponseBody()) {
                    out.write(err);
                }
                return;
            }
            if (path.startsWith("/slow")) {
                long ms = Long.parseLong(q.substring(q.indexOf('=') + 1));
                Thread.sleep(ms);
            }
            if (path.startsWith("/hold") && !held.await(1, TimeUnit.MINUTES)) {
                throw new IllegalStateException("/hold never released");
            }
            if (path.startsWith("/big")) {
                long bytes = Long.parseLong(q.substring(q.indexOf('=') + 1));
                ex.getResponseHeaders().set("content-type", "application/octet-stream");
                ex.sendResponseHeaders(200, 0); // chunked
                byte[] block = new byte[64 * 1024];
                try (OutputStream out = ex.getResponseBody()) {
                    long left = bytes;
                    while (left > 0) {
                        int w = (int) Math.min(block.length, left);
                        out.write(block, 0, w);
                        left -= w;
                    }
                }
                return;
            }
            byte[] body = (path.startsWith("/caller") ? (caller == null ? "-" : caller)
                    : count + " " + crc.getValue() + " " + ex.getRequestMethod() + " " + ex.getRequestURI())
                    .getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("content-type", "text/plain");
            ex.getResponseHeaders().set("x-app", "test");
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (healthCheck) {
                healthChecks.incrementAndGet();
            }
            served.incrementAndGet();
            inFlight.decrementAndGet();
            ex.close();
        }
    }

    @Override
    public void close() {
        release();
        server.stop(0);
    }
}
