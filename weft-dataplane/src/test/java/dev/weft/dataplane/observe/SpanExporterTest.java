package dev.weft.dataplane.observe;

import com.sun.net.httpserver.HttpServer;
import dev.weft.dataplane.observe.ExchangeObserver.Direction;
import dev.weft.registry.auth.ControlCredentials;
import dev.weft.registry.auth.RequestSignature;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The exporter against a small collector on a loopback port: spans handed over by several threads, each through a
 * ring of its own, all arrive once, in batches; a thread whose ring is full drops and counts instead of waiting.
 */
class SpanExporterTest {
    private static final Pattern SPAN_ID = Pattern.compile("\"id\":\"([0-9a-f]{16})\"");
    private HttpServer collector;
    private final Set<String> received = ConcurrentHashMap.newKeySet();
    private final AtomicInteger posts = new AtomicInteger();
    /** The last batch's Authorization header (null for none) and its body's bytes. */
    private volatile String authorization;
    private volatile byte[] lastBody;
    /** Every post, refused ones included. */
    private final AtomicInteger refusedOrNot = new AtomicInteger();
    /** Answer 401 to a bearer, as the control plane does once a join token expired. */
    private volatile boolean refuseBearers;
    /** When set, the body of every 202: the control plane's answer to a batch with spans it did not store. */
    private volatile String acceptedWith;
    private SpanExporter exporter;

    private URI start() throws Exception {
        collector = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        collector.createContext("/api/v2/spans", ex -> {
            byte[] bytes = ex.getRequestBody().readAllBytes();
            String body = new String(bytes, StandardCharsets.UTF_8);
            authorization = ex.getRequestHeaders().getFirst("Authorization");
            lastBody = bytes;
            refusedOrNot.incrementAndGet();
            if (refuseBearers && authorization != null && authorization.startsWith("Bearer ")) {
                ex.sendResponseHeaders(401, -1);   // as the control plane answers an expired join token
                ex.close();
                return;
            }
            Matcher m = SPAN_ID.matcher(body);
            while (m.find()) {
                received.add(m.group(1));
            }
            posts.incrementAndGet();
            byte[] answer = acceptedWith == null ? null : acceptedWith.getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(202, answer == null ? -1 : answer.length);
            if (answer != null) {
                ex.getResponseBody().write(answer);
            }
            ex.close();
        });
        collector.start();
        return URI.create("http://127.0.0.1:" + collector.getAddress().getPort() + "/api/v2/spans");
    }

    @AfterEach
    void stop() {
        if (exporter != null) {
            exporter.close();
        }
        if (collector != null) {
            collector.stop(0);
        }
    }

    private static ObservedExchange span(long n) {
        ObservedExchange x = new ObservedExchange(null, null, Direction.OUTBOUND, "consumer", "POST", "/", "/127.0.0.1:1",
                RouteTable.DEFAULT, 1_000, 1_700_000_000_000_000L);
        x.traceHi = 1;
        x.traceLo = n;
        x.spanId = n;
        x.endNanos = 2_000;
        x.status = 200;
        return x;
    }

    @Test
    void spansFromSeveralThreadsEachThroughItsOwnRingAllArriveOnceInBatches() throws Exception {
        exporter = new SpanExporter(start(), SpanEncoder.named("zipkin"), 16_384, 100, Duration.ofMillis(200));
        exporter.start();
        int threads = 3;
        int each = 2_000;
        List<Thread> started = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            long first = i * (long) each + 1;
            started.add(Thread.ofPlatform().start(() -> {
                for (long k = first; k < first + each; k++) {
                    exporter.offer(span(k));
                }
            }));
        }
        for (Thread t : started) {
            t.join();
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> exporter.exported() == threads * each);
        assertThat(received).hasSize(threads * each);
        assertThat(exporter.droppedQueueFull()).isZero();
        assertThat(exporter.queued()).isZero();
        assertThat(posts.get()).as("batches of up to 100 spans, not a post per span").isBetween(threads * each / 100,
                threads * each / 10);
    }

    @Test
    void batchesToTheControlPlaneCarryTheJoinTokenThenOnceItIsRefusedASignatureAndNoOtherCollectorGetsAny()
            throws Exception {
        URI endpoint = start();
        int port = collector.getAddress().getPort();
        assertThat(Observability.isControlPlane(endpoint, "weft://127.0.0.1:" + port)).isTrue();
        assertThat(Observability.isControlPlane(endpoint, "weft://127.0.0.1:" + port + "/")).isTrue();
        assertThat(Observability.isControlPlane(endpoint, "weft://127.0.0.1:" + (port == 1 ? 2 : 1))).isFalse();
        assertThat(Observability.isControlPlane(endpoint, "etcd://127.0.0.1:" + port)).isFalse();
        assertThat(Observability.isControlPlane(endpoint, null)).isFalse();

        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        KeyPair keys = g.generateKeyPair();
        X500Name name = new X500Name("CN=consumer");
        X509Certificate cert = new JcaX509CertificateConverter().getCertificate(new JcaX509v3CertificateBuilder(name,
                BigInteger.ONE, Date.from(Instant.now().minusSeconds(60)), Date.from(Instant.now().plusSeconds(600)),
                name, keys.getPublic()).build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
        exporter = new SpanExporter(endpoint, SpanEncoder.named("zipkin"), 16, 1, Duration.ofMillis(20),
                new Observability.SpanCredentials(ControlCredentials.bearer("weft_jt_token"),
                        RequestSignature.credentials(() -> new RequestSignature.Signer(keys.getPrivate(), cert),
                                ControlCredentials.NONE)));
        exporter.start();
        exporter.offer(span(1));
        await().atMost(Duration.ofSeconds(10)).until(() -> received.size() == 1);
        assertThat(authorization).as("the token, in memory: nothing to compute per batch")
                .isEqualTo("Bearer weft_jt_token");

        refuseBearers = true;
        exporter.offer(span(2));
        await().atMost(Duration.ofSeconds(10)).until(() -> exporter.exported() == 2);
        String header = authorization;
        assertThat(header).startsWith(RequestSignature.SCHEME + " ");
        assertThat(RequestSignature.verify(cert.getPublicKey(), RequestSignature.parse(header), "POST",
                "/api/v2/spans", lastBody)).as("the refused batch went again, signed over its bytes").isTrue();
        int postsBefore = refusedOrNot.get();
        exporter.offer(span(3));
        await().atMost(Duration.ofSeconds(10)).until(() -> exporter.exported() == 3);
        assertThat(authorization).as("signed from then on").startsWith(RequestSignature.SCHEME + " ");
        assertThat(refusedOrNot.get() - postsBefore).as("one post: the refused bearer is not tried again")
                .isEqualTo(1);
        exporter.close();

        // The 5-argument exporter without credentials, as Observability builds it for any other collector.
        exporter = new SpanExporter(endpoint, SpanEncoder.named("zipkin"), 16, 1, Duration.ofMillis(20), null);
        exporter.start();
        exporter.offer(span(4));
        await().atMost(Duration.ofSeconds(10)).until(() -> received.size() == 4);
        assertThat(authorization).isNull();
    }

    @Test
    void spansTheCollectorTookTheBatchButNotAreCountedAsDroppedNotAsExported() throws Exception {
        acceptedWith = "{\"refused\":3,\"code\":\"span-not-senders\",\"error\":\"3 span(s) of this batch were not"
                + " stored\"}";
        // Batches of 10, and no flush by time in the test's span: one batch of all 10.
        exporter = new SpanExporter(start(), SpanEncoder.named("zipkin"), 1_024, 10, Duration.ofSeconds(30));
        exporter.start();
        for (long k = 1; k <= 10; k++) {
            exporter.offer(span(k));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> exporter.exported() + exporter.droppedRefused() == 10);
        assertThat(exporter.exported()).isEqualTo(7);
        assertThat(exporter.droppedRefused()).isEqualTo(3);
        assertThat(exporter.droppedExportFailed()).as("the batch itself was taken").isZero();
        assertThat(exporter.lastError()).contains("3 of its spans").contains("span-not-senders");
        // A number larger than the batch, or none, cannot make the counts wrong.
        assertThat(SpanExporter.refusedIn("{\"refused\":99999999999}", 10)).isEqualTo(10);
        assertThat(SpanExporter.refusedIn("", 10)).isZero();
        assertThat(SpanExporter.refusedIn(null, 10)).isZero();
    }

    @Test
    void aThreadWhoseRingIsFullDropsAndCountsInsteadOfWaiting() throws Exception {
        exporter = new SpanExporter(start(), SpanEncoder.named("zipkin"), 16, 1_000, Duration.ofSeconds(60));
        // Not started: nothing drains, so the seventeenth span finds this thread's ring full.
        for (int k = 1; k <= 17; k++) {
            exporter.offer(span(k));
        }
        assertThat(exporter.queued()).isEqualTo(16);
        assertThat(exporter.droppedQueueFull()).isEqualTo(1);
        Thread other = Thread.ofPlatform().start(() -> exporter.offer(span(100)));
        other.join();
        assertThat(exporter.queued()).as("another thread's ring has room").isEqualTo(17);
        assertThat(exporter.droppedQueueFull()).isEqualTo(1);
    }

    @Test
    void aRecordOnlyTheExporterReadsComesBackToItsThreadOnceEncodedAndStartsItsNextExchangeClean() throws Exception {
        exporter = new SpanExporter(start(), SpanEncoder.named("zipkin"), 16, 1, Duration.ofMillis(10));
        exporter.start();
        ObservedExchange shared = span(1);
        exporter.offer(shared); // an access log reads it too: never given back
        await().atMost(Duration.ofSeconds(10)).until(() -> exporter.exported() == 1);
        Thread.sleep(50);
        assertThat(exporter.spare()).isNull();

        ObservedExchange first = span(2);
        first.error = "upstream-reset";
        first.attempts = 3;
        first.endpointId = "provider-1";
        exporter.offer(first, true);
        await().atMost(Duration.ofSeconds(10)).until(() -> exporter.exported() == 2);
        ObservedExchange again = null;
        for (int i = 0; i < 200 && again == null; i++) { // given back just after the post returned
            again = exporter.spare();
            Thread.sleep(10);
        }
        assertThat(again).isSameAs(first);
        assertThat(exporter.spare()).as("given back once").isNull();
        assertThat(received).contains("0000000000000002");

        again.begin(null, Direction.INBOUND, "provider", "GET", "/next", "/127.0.0.1:2", RouteTable.DEFAULT, 5_000, 7);
        assertThat(again.error).isNull();
        assertThat(again.attempts).isZero();
        assertThat(again.endpointId).isNull();
        assertThat(again.traceHi | again.traceLo | again.spanId | again.parentId).isZero();
        assertThat(again.endNanos).isZero();
        assertThat(again.status).isZero();
        assertThat(again.home).isNull();
        assertThat(again.destination).isEqualTo("provider");
        assertThat(again.path).isEqualTo("/next");
    }
}
