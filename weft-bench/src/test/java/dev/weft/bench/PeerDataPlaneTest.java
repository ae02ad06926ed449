package dev.weft.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PeerDataPlaneTest {
    private static final List<DataPlane.Upstream> PROVIDERS = List.of(
            new DataPlane.Upstream("small", 41001, 1, 200), new DataPlane.Upstream("medium", 41002, 2, 200),
            new DataPlane.Upstream("large", 41003, 3, 200));

    @ParameterizedTest
    @EnumSource(PeerDataPlane.Peer.class)
    void rendersEveryUpstreamAndLeavesNoPlaceholder(PeerDataPlane.Peer peer) {
        String config = PeerDataPlane.render(PeerDataPlane.template(peer), Path.of("/tmp/run"), "x-consumer", 40000,
                PROVIDERS, 0);
        assertThat(config).doesNotContain("{{#").doesNotContain("{{/").contains("40000")
                .contains("127.0.0.1:41001").contains("127.0.0.1:41002").contains("127.0.0.1:41003");
        assertThat(config.replaceAll("(?m)^\\s*#.*$", "")).doesNotContain("{{");
    }

    @Test
    void nginxAndHaproxyGetTheWeightsAndTheLimit() {
        String nginx = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.NGINX), Path.of("/r"), "n", 1,
                PROVIDERS, 0);
        assertThat(nginx).contains("server 127.0.0.1:41003 weight=3 max_conns=200;").contains("keepalive 512;");
        String haproxy = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.HAPROXY), Path.of("/r"), "h", 1,
                PROVIDERS, 0);
        assertThat(haproxy).contains("server medium 127.0.0.1:41002 weight 2 maxconn 200");
        String caddy = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.CADDY), Path.of("/r"), "c", 1,
                PROVIDERS, 0);
        assertThat(caddy).contains("to 127.0.0.1:41001 127.0.0.1:41002 127.0.0.1:41003")
                .contains("max_conns_per_host 200");
    }

    @Test
    void eachPeerRunsOnTheThreadsAskedForOrOnItsOwnDefault() {
        String nginx = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.NGINX), Path.of("/r"), "n", 1,
                PROVIDERS, 1);
        assertThat(nginx).contains("worker_processes 1;");
        assertThat(PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.NGINX), Path.of("/r"), "n", 1,
                PROVIDERS, 0)).contains("worker_processes auto;");
        String haproxy = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.HAPROXY), Path.of("/r"), "h",
                1, PROVIDERS, 2);
        assertThat(haproxy).containsPattern("(?m)^global\\n(?:.*\\n)*?\\s+nbthread 2$");
        assertThat(PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.HAPROXY), Path.of("/r"), "h", 1,
                PROVIDERS, 0)).doesNotContainPattern("(?m)^\\s*nbthread");
        assertThat(new PeerDataPlane(PeerDataPlane.Peer.CADDY).withThreads(2).threads()).isEqualTo(2);
    }

    @Test
    void unequalCapacitiesGoToEachServerAndCaddysSingleLimitIsTheLargest() {
        List<DataPlane.Upstream> unequal = List.of(new DataPlane.Upstream("small", 41001, 1, 100),
                new DataPlane.Upstream("medium", 41002, 2, 200), new DataPlane.Upstream("large", 41003, 3, 300));
        assertThat(PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.NGINX), Path.of("/r"), "n", 1,
                unequal, 0)).contains("server 127.0.0.1:41001 weight=1 max_conns=100;")
                .contains("server 127.0.0.1:41003 weight=3 max_conns=300;");
        assertThat(PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.HAPROXY), Path.of("/r"), "h", 1,
                unequal, 0)).contains("server small 127.0.0.1:41001 weight 1 maxconn 100")
                .contains("server large 127.0.0.1:41003 weight 3 maxconn 300");
        assertThat(PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.CADDY), Path.of("/r"), "c", 1,
                unequal, 0)).contains("max_conns_per_host 300");
    }

    @Test
    void withTlsTheProviderSideTerminatesMutualTlsAndTheConsumerSideDialsItWithItsCertificate(@TempDir Path run)
            throws Exception {
        PeerCertificates.Issued provider = PeerCertificates.issue(run, "haproxy-tls-provider-small");
        PeerCertificates.Issued consumer = PeerCertificates.issue(run, "haproxy-tls-consumer");
        assertThat(consumer.ca()).as("one CA per run").isEqualTo(provider.ca());
        String haproxyProvider = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.HAPROXY), run, "p",
                40000, PROVIDERS.subList(0, 1), 1, PeerDataPlane.tlsSettings(PeerDataPlane.Peer.HAPROXY, provider, true));
        assertThat(haproxyProvider).contains("bind 127.0.0.1:40000 ssl crt " + provider.combined() + " ca-file "
                + provider.ca() + " verify required ssl-min-ver TLSv1.3\n")
                .contains("server small 127.0.0.1:41001 weight 1 maxconn 200\n");
        String haproxyConsumer = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.HAPROXY), run, "c",
                40001, PROVIDERS, 1, PeerDataPlane.tlsSettings(PeerDataPlane.Peer.HAPROXY, consumer, false));
        assertThat(haproxyConsumer).contains("bind 127.0.0.1:40001\n").contains("server large 127.0.0.1:41003 weight 3"
                + " maxconn 200 ssl verify required ca-file " + consumer.ca() + " crt " + consumer.combined()
                + " ssl-min-ver TLSv1.3\n").contains("http-reuse always");

        String nginxProvider = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.NGINX), run, "np", 40002,
                PROVIDERS.subList(0, 1), 1, PeerDataPlane.tlsSettings(PeerDataPlane.Peer.NGINX, provider, true));
        assertThat(nginxProvider).contains("listen 127.0.0.1:40002 ssl backlog=4096;").contains("ssl_verify_client on;")
                .contains("ssl_client_certificate " + provider.ca() + ";").contains("ssl_protocols TLSv1.3;")
                .contains("proxy_pass http://backends;");
        assertThat(withoutComments(nginxProvider)).doesNotContain("proxy_ssl_");
        String nginxConsumer = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.NGINX), run, "nc", 40003,
                PROVIDERS, 1, PeerDataPlane.tlsSettings(PeerDataPlane.Peer.NGINX, consumer, false));
        assertThat(nginxConsumer).contains("listen 127.0.0.1:40003 backlog=4096;").contains("proxy_pass https://backends;")
                .contains("proxy_ssl_certificate " + consumer.cert() + ";").contains("proxy_ssl_verify on;")
                .contains("proxy_ssl_session_reuse on;").contains("keepalive 512;");
        assertThat(withoutComments(nginxConsumer)).doesNotContain("ssl_verify_client");
        for (String config : List.of(haproxyProvider, haproxyConsumer, nginxProvider, nginxConsumer)) {
            assertThat(withoutComments(config)).doesNotContain("{{");
        }
        // The peers themselves accept the configurations, certificates and keys (when installed).
        check(run, "haproxy", haproxyProvider, List.of("haproxy", "-c", "-f"));
        check(run, "haproxy", haproxyConsumer, List.of("haproxy", "-c", "-f"));
        check(run, "nginx", nginxProvider, List.of("nginx", "-p", run.toString(), "-e", "stderr", "-t", "-c"));
        check(run, "nginx", nginxConsumer, List.of("nginx", "-p", run.toString(), "-e", "stderr", "-t", "-c"));
    }

    @Test
    void eachPeerGetsALeafOfTheRunsCaForLocalhostAndItsKeyIsItsOwnersAlone(@TempDir Path run) throws Exception {
        PeerCertificates.Issued a = PeerCertificates.issue(run, "a");
        PeerCertificates.Issued b = PeerCertificates.issue(run, "b");
        java.security.cert.CertificateFactory x509 = java.security.cert.CertificateFactory.getInstance("X.509");
        java.security.cert.X509Certificate ca = (java.security.cert.X509Certificate) x509.generateCertificate(
                java.nio.file.Files.newInputStream(a.ca()));
        for (PeerCertificates.Issued leaf : List.of(a, b)) {
            java.security.cert.X509Certificate cert = (java.security.cert.X509Certificate) x509.generateCertificate(
                    java.nio.file.Files.newInputStream(leaf.cert()));
            cert.verify(ca.getPublicKey());
            cert.checkValidity();
            assertThat(cert.getSubjectAlternativeNames().stream().map(n -> String.valueOf(n.get(1))).toList())
                    .contains("localhost", "127.0.0.1");
            assertThat(cert.getExtendedKeyUsage()).contains("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2");
            assertThat(cert.getBasicConstraints()).as("not a CA").isEqualTo(-1);
            for (Path secret : List.of(leaf.key(), leaf.combined())) {
                assertThat(java.nio.file.attribute.PosixFilePermissions.toString(
                        java.nio.file.Files.getPosixFilePermissions(secret))).isEqualTo("rw-------");
            }
        }
        assertThat(ca.getBasicConstraints()).as("a CA").isGreaterThanOrEqualTo(0);
        assertThat(java.nio.file.Files.readString(a.combined())).contains("BEGIN CERTIFICATE").contains("PRIVATE KEY");
    }

    private static String withoutComments(String config) {
        return config.replaceAll("(?m)^\\s*#.*$", "");
    }

    /** Runs the peer's own configuration check on {@code config}; skipped when the peer is not installed. */
    private static void check(Path run, String binary, String config, List<String> command) throws Exception {
        if (!PeerDataPlane.onPath(binary)) {
            return;
        }
        Path file = java.nio.file.Files.createTempFile(run, binary, ".conf");
        java.nio.file.Files.writeString(file, config);
        List<String> full = new java.util.ArrayList<>(command);
        full.add(file.toString());
        Process p = new ProcessBuilder(full).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(String.join(" ", full) + ":\n" + out + "\n" + config).isZero();
    }

    @Test
    void anUnknownVariableFailsInsteadOfProducingABrokenProxy() {
        assertThatThrownBy(() -> PeerDataPlane.render("listen {{lsten_port}};", Path.of("/r"), "n", 1, PROVIDERS, 0))
                .hasMessageContaining("unknown template variable {{lsten_port}}");
    }
}
