package dev.weft.control;

import dev.weft.control.ca.CertificateAuthority;
import dev.weft.registry.Endpoint;
import dev.weft.registry.Registration;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import dev.weft.registry.Watch;
import dev.weft.registry.tls.ControlTrust;
import dev.weft.registry.weft.ControlPlaneUrl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLSocket;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The control plane's API over TLS ({@code --api-tls on}), in process on a loopback port the OS picks: registry
 * clients that trust its CA by pin or by file register and watch; a wrong pin or no trust at all is refused with a
 * message that says what to fix, and registers nothing; plain HTTP on the port gets no answer.
 */
class ControlApiTlsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;
    private ControlPlane control;
    private CertificateAuthority ca;
    private int port;
    private final List<AutoCloseable> opened = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        ca = CertificateAuthority.open(dir.resolve("data/ca"), CertificateAuthority.Settings.defaults());
        control = new ControlPlane().authority(ca).apiTls(ApiTls.Mode.ON, List.of("control.test", "10.9.8.7"));
        port = control.start(new InetSocketAddress("127.0.0.1", 0), dir.resolve("data")).getPort();
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : opened.reversed()) {   // registrations and watches before their registry
            c.close();
        }
        control.close();
    }

    @Test
    void aRegistryClientPinningTheCaRegistersAndWatchesOverTls() throws Exception {
        registersAndWatches("weft+tls://127.0.0.1:" + port + "?ca-pin=" + ca.rootPin());
    }

    @Test
    void aRegistryClientTrustingTheCaFileRegistersAndWatchesOverTls() throws Exception {
        registersAndWatches(ControlPlaneUrl.withTrust("weft+tls://localhost:" + port,
                dir.resolve("data/ca/root.pem"), null));
    }

    @Test
    void aWrongPinIsRefusedWithThePinItGotAndNothingIsRegistered() throws Exception {
        String wrong = "sha256:" + "ab".repeat(32);
        Registry registry = open("weft+tls://127.0.0.1:" + port + "?ca-pin=" + wrong);
        opened.add(registry.register(endpoint("provider-1"), Duration.ofSeconds(10)));

        await().atMost(WAIT).until(() -> registry.health().lastError() != null);
        assertThat(registry.health().lastError())
                .contains("the control plane's CA does not match --control-ca-pin " + wrong)
                .contains("(got " + ca.rootPin() + ")");
        assertThat(registry.health().connected()).isFalse();
        assertThat(endpointsSeenByATrustedClient()).isEmpty();
    }

    @Test
    void aClientWithoutTrustIsToldWhichFlagsToPassAndRegistersNothing() throws Exception {
        Registry registry = open("weft+tls://127.0.0.1:" + port);
        opened.add(registry.register(endpoint("provider-1"), Duration.ofSeconds(10)));

        await().atMost(WAIT).until(() -> registry.health().lastError() != null);
        assertThat(registry.health().lastError()).contains("not signed by a CA this client trusts")
                .contains("--control-ca FILE").contains("--control-ca-pin sha256:");
        assertThat(endpointsSeenByATrustedClient()).isEmpty();
    }

    @Test
    void aPinnedClientStillChecksTheHostName() throws Exception {
        // The pin replaces the trust anchor only: 127.0.0.2 is no SAN of the serving certificate.
        ControlTrust trust = ControlTrust.of(null, ca.rootPin());
        try (Socket raw = new Socket()) {
            raw.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
            raw.setSoTimeout(5_000);
            // Connected to the control plane, checked as the URL's host 127.0.0.2 (no SAN of its certificate): what
            // a client would see of a server elsewhere that presented this chain.
            try (SSLSocket named = (SSLSocket) trust.jdk().getSocketFactory().createSocket(raw, "127.0.0.2", port,
                    false)) {
                var params = named.getSSLParameters();
                params.setEndpointIdentificationAlgorithm("HTTPS");
                named.setSSLParameters(params);
                assertThatThrownBy(named::startHandshake).hasMessageContaining("127.0.0.2");
            }
        }
    }

    @Test
    void plainHttpOnTheTlsPortGetsNoAnswerAndTheServerStaysHealthy() throws Exception {
        try (Socket plain = new Socket("127.0.0.1", port)) {
            plain.setSoTimeout(15_000);   // beyond the TLS handshake timeout (10 s): the server must close first
            OutputStream out = plain.getOutputStream();
            out.write("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = plain.getInputStream();
            // readAllBytes returns once the server has closed; at most a TLS alert came, never an HTTP answer.
            String got = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            assertThat(got).doesNotContain("HTTP/");
        }
        HttpResponse<String> health = get("/v1/health");
        assertThat(health.statusCode()).isEqualTo(200);
        await().atMost(WAIT).untilAsserted(() -> assertThat(get("/metrics").body())
                .contains("weft_control_api_tls_failures_total{reason=\"not-tls\"} 1"));
    }

    @Test
    void aRenewedCertificateIsWhatNewConnectionsGet() throws Exception {
        X509Certificate first = control.apiTls().certificate();
        assertThat(servedSerial()).isEqualTo(first.getSerialNumber());

        control.apiTls().renew();

        X509Certificate second = control.apiTls().certificate();
        assertThat(second.getSerialNumber()).isNotEqualTo(first.getSerialNumber());
        assertThat(servedSerial()).isEqualTo(second.getSerialNumber());
        assertThat(get("/metrics").body()).contains("weft_control_api_tls_renewals_total 1");
    }

    @Test
    void autoServesTlsOffLoopbackOnlyAndKeepsLoopbackPlain() throws Exception {
        assertThat(ApiTls.Mode.AUTO.tlsOn(new InetSocketAddress("127.0.0.1", 0))).isFalse();
        assertThat(ApiTls.Mode.AUTO.tlsOn(new InetSocketAddress("::1", 0))).isFalse();
        assertThat(ApiTls.Mode.AUTO.tlsOn(new InetSocketAddress("0.0.0.0", 0))).isTrue();
        assertThat(ApiTls.Mode.OFF.tlsOn(new InetSocketAddress("0.0.0.0", 0))).isFalse();

        CertificateAuthority other = CertificateAuthority.open(dir.resolve("auto/ca"),
                CertificateAuthority.Settings.defaults());
        try (ControlPlane auto = new ControlPlane().authority(other).apiTls(ApiTls.Mode.AUTO, List.of())) {
            int plainPort = auto.start(new InetSocketAddress("127.0.0.1", 0), dir.resolve("auto")).getPort();
            assertThat(auto.apiTls()).isNull();
            try (HttpClient http = HttpClient.newHttpClient()) {
                assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + plainPort + "/v1/health"))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).statusCode())
                        .isEqualTo(200);
            }
        }
    }

    private void registersAndWatches(String url) throws Exception {
        Registry registry = open(url);
        List<List<Endpoint>> seen = new CopyOnWriteArrayList<>();
        Watch watch = registry.watch("provider", (service, endpoints) -> seen.add(endpoints));
        opened.add(watch);
        Registration registration = registry.register(endpoint("provider-1"), Duration.ofSeconds(10));
        opened.add(registration);

        await().atMost(WAIT).until(() -> !seen.isEmpty() && seen.getLast().size() == 1);
        assertThat(seen.getLast().getFirst().id()).isEqualTo("provider-1");
        assertThat(registry.health().connected()).isTrue();
    }

    /** What a client pinning the right CA sees of the service "provider", once its watch has its first list. */
    private List<Endpoint> endpointsSeenByATrustedClient() throws Exception {
        Registry trusted = open("weft+tls://127.0.0.1:" + port + "?ca-pin=" + ca.rootPin());
        List<List<Endpoint>> seen = new CopyOnWriteArrayList<>();
        opened.add(trusted.watch("provider", (service, endpoints) -> seen.add(endpoints)));
        await().atMost(WAIT).until(() -> !seen.isEmpty());
        return seen.getLast();
    }

    private Registry open(String url) {
        Registry registry = Registries.open(url, Operator.credentials(dir.resolve("data")));
        opened.add(registry);
        return registry;
    }

    private static Endpoint endpoint(String id) {
        return new Endpoint("provider", id, "127.0.0.1", 9, 1, 0, Map.of());
    }

    private HttpResponse<String> get(String path) throws Exception {
        try (HttpClient http = dev.weft.control.cli.Http.tlsClient(ControlTrust.of(null, ca.rootPin()))) {
            return http.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + path))
                    .header("Authorization", Operator.header(dir.resolve("data")))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    /** The serial of the certificate a new connection is served. */
    private BigInteger servedSerial() throws Exception {
        try (SSLSocket socket = (SSLSocket) ControlTrust.of(null, ca.rootPin()).jdk().getSocketFactory()
                .createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000);
            socket.startHandshake();
            return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }
}
