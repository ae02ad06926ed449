package dev.weft.control.ca;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weft.control.ControlMain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.BufferedReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code weft control} as its own process is the CA; {@code weft token create} talks to it as an operator would. */
class ControlCaProcessTest {
    private static final Pattern LISTENING = Pattern.compile("weft control listening on \\S+:(\\d+)");

    @TempDir
    Path dir;
    private Process process;

    @AfterEach
    void stop() throws Exception {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aControlPlaneProcessMakesItsRootAndTheTokenCommandBuysACertificateWithIt() throws Exception {
        int port = launch("--trust-domain", "test.example", "--cert-ttl", "10m");
        Path key = dir.resolve("data/ca/root.key");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(key))).isEqualTo("rw-------");
        assertThat(Files.readString(dir.resolve("control.err")))
                .contains("certificate authority for spiffe://test.example: new root generated in");

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new TokenCommand()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err))
                .execute("create", "--service", "provider", "--ttl", "5m", "--registry", "weft://127.0.0.1:" + port,
                        "--admin-token-file", dir.resolve("data/admin.token").toString());
        assertThat(exit).as(err.toString()).isZero();
        String token = out.toString().strip();
        assertThat(token).startsWith(JoinTokens.PREFIX);
        assertThat(err.toString()).contains("join token ").contains("for service 'provider'").doesNotContain(token);
        assertThat(Files.readString(dir.resolve("data/ca/tokens.json"))).doesNotContain(token)
                .contains(JoinTokens.sha256(token));

        String csr = CaFixture.csrPem(CaFixture.p256());
        byte[] body = CaFixture.JSON.writeValueAsBytes(Map.of("service", "provider", "token", token, "csr", csr));
        HttpResponse<String> r;
        try (HttpClient http = HttpClient.newHttpClient()) {
            r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/certificates"))
                    .timeout(Duration.ofSeconds(5)).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
        }
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode answer = CaFixture.JSON.readTree(r.body());
        Files.writeString(dir.resolve("leaf.pem"), answer.get("certificate").asText());
        Files.writeString(dir.resolve("bundle.pem"), answer.get("trustBundle").asText());
        assertThat(openssl("verify", "-CAfile", "bundle.pem", "leaf.pem")).contains("leaf.pem: OK");
        assertThat(openssl("x509", "-in", "leaf.pem", "-noout", "-ext", "subjectAltName"))
                .contains("URI:spiffe://test.example/service/provider");
        assertThat(openssl("x509", "-in", "bundle.pem", "-noout", "-subject")).contains("Weft root CA test.example");
    }

    @Test
    void withApiTlsOnTheProcessServesTls13WithItsSansAndTheTokenCommandPinsItsCa() throws Exception {
        int port = launch("--api-tls", "on", "--api-san", "control.example.com", "--api-san", "10.1.2.3");
        String log = Files.readString(dir.resolve("control.err"));
        Matcher pin = Pattern.compile("--control-ca-pin (sha256:[0-9a-f]{64})").matcher(log);
        assertThat(pin.find()).as(log).isTrue();
        assertThat(log).contains("API over TLSv1.3");
        // The pin is what openssl computes from the root: the SHA-256 of its SubjectPublicKeyInfo (docs/security.md).
        String publicKey = openssl("x509", "-in", "data/ca/root.pem", "-pubkey", "-noout");
        byte[] spki = java.util.Base64.getMimeDecoder().decode(publicKey.replaceAll("-----[A-Z ]+-----", ""));
        assertThat(pin.group(1)).isEqualTo("sha256:" + java.util.HexFormat.of().formatHex(
                java.security.MessageDigest.getInstance("SHA-256").digest(spki)));

        // openssl, as an operator would check it: TLS 1.3, a chain that verifies with the root, the names asked for.
        String handshake = opensslWithNoInput("s_client", "-connect", "127.0.0.1:" + port, "-tls1_3", "-showcerts",
                "-CAfile", "data/ca/root.pem", "-verify_return_error", "-verify_ip", "127.0.0.1");
        assertThat(handshake).contains("New, TLSv1.3").contains("Verify return code: 0 (ok)");
        Files.writeString(dir.resolve("served.pem"), handshake.substring(handshake.indexOf("-----BEGIN CERTIFICATE"),
                handshake.indexOf("-----END CERTIFICATE-----") + "-----END CERTIFICATE-----".length()) + "\n");
        assertThat(openssl("x509", "-in", "served.pem", "-noout", "-ext", "subjectAltName"))
                .contains("DNS:localhost").contains("DNS:control.example.com").contains("IP Address:127.0.0.1")
                .contains("IP Address:10.1.2.3").contains("IP Address:0:0:0:0:0:0:0:1");

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new TokenCommand()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err))
                .execute("create", "--service", "provider", "--registry", "weft+tls://127.0.0.1:" + port,
                        "--control-ca-pin", pin.group(1), "--admin-token-file",
                        dir.resolve("data/admin.token").toString());
        assertThat(exit).as(err.toString()).isZero();
        assertThat(out.toString().strip()).startsWith(JoinTokens.PREFIX);
        assertThat(err.toString()).contains("--control-ca-pin " + pin.group(1));

        StringWriter plain = new StringWriter();
        assertThat(new CommandLine(new TokenCommand()).setErr(new PrintWriter(plain)).execute("create", "--service",
                "provider", "--registry", "weft://127.0.0.1:" + port, "--control-ca-pin", pin.group(1))).isEqualTo(2);
        assertThat(plain.toString()).contains("its URL is weft+tls://HOST:PORT");
    }

    @Test
    void offOnANonLoopbackAddressIsSaidLoudly() throws Exception {
        launchOn("0.0.0.0:0", "--api-tls", "off");
        assertThat(Files.readString(dir.resolve("control.err")))
                .contains("WARNING: --api-tls off on ").contains("which is not a loopback address")
                .contains("cross the network in clear text");
    }

    @Test
    void theTokenCommandSaysWhyWhenTheControlPlaneIsNotThere() {
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new TokenCommand()).setErr(new PrintWriter(err))
                .execute("create", "--service", "provider", "--registry", "weft://127.0.0.1:1");
        assertThat(exit).isEqualTo(1);
        assertThat(err.toString()).contains("cannot reach the control plane at weft://127.0.0.1:1");

        StringWriter etcd = new StringWriter();
        assertThat(new CommandLine(new TokenCommand()).setErr(new PrintWriter(etcd))
                .execute("create", "--service", "provider", "--registry", "etcd://127.0.0.1:2379")).isEqualTo(1);
        assertThat(etcd.toString()).contains("expected the control plane's weft://HOST:PORT");
    }

    @Test
    void caFlagsOutOfRangeAreUsageErrors() {
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new dev.weft.control.ControlCommand()).setErr(new PrintWriter(err))
                .execute("--listen", "127.0.0.1:0", "--data-dir", dir.toString(), "--cert-ttl", "1s");
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("certificate TTL 1s out of range (expected 10s to 30 days)");

        StringWriter alone = new StringWriter();
        assertThat(new CommandLine(new dev.weft.control.ControlCommand()).setErr(new PrintWriter(alone))
                .execute("--listen", "127.0.0.1:0", "--data-dir", dir.toString(), "--ca-cert", "x.pem")).isEqualTo(2);
        assertThat(alone.toString()).contains("--ca-cert and --ca-key go together");
    }

    private int launch(String... flags) throws Exception {
        return launchOn("127.0.0.1:0", flags);
    }

    private int launchOn(String listen, String... flags) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        for (String flag : System.getProperty("weft.jvm.flags", "").trim().split("\\s+")) {
            if (!flag.isEmpty()) {
                command.add(flag);
            }
        }
        command.addAll(List.of("-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                ControlMain.class.getName(), "--listen", listen, "--data-dir", dir.resolve("data").toString()));
        command.addAll(List.of(flags));
        process = new ProcessBuilder(command).redirectError(dir.resolve("control.err").toFile()).start();
        BufferedReader out = process.inputReader();
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        String line = first.get(30, TimeUnit.SECONDS);
        assertThat(line).as(Files.readString(dir.resolve("control.err"))).isNotNull();
        Matcher m = LISTENING.matcher(line);
        assertThat(m.matches()).as(line).isTrue();
        return Integer.parseInt(m.group(1));
    }

    /** openssl with its stdin at end of file, so that s_client closes once the handshake is done. */
    private String opensslWithNoInput(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).as("openssl " + String.join(" ", args) + " ended").isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    private String openssl(String... args) throws Exception {
        return CaFixture.openssl(dir, args);
    }
}
