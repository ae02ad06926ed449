package dev.weft.registry.etcd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.testing.HeldPort;
import dev.weft.testing.LoopbackPorts;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Real etcd members on loopback for tests: the {@code etcd} binary (Debian's etcd-server 3.4), each member on ports
 * the OS just handed out, with its own data dir under the cluster's directory, started and stopped by PID (SIGKILL).
 * A member is "up" once its log says it serves clients and has published itself to the cluster, which takes a raft
 * commit, so a started cluster has a leader and accepts writes.
 *
 * <p>Plain members serve http on loopback; {@link Tls} switches clients (not peers) to https with client certificates.
 */
final class EtcdCluster implements AutoCloseable {
    static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Server side of client TLS: certificate and key for the members, and the CA that client certificates need. */
    record Tls(Path serverCert, Path serverKey, Path clientCa) {}

    /**
     * Raft timing. Tests that count seconds of lease expiry want etcd's smallest lease (1 s, from a 100 ms election
     * timeout); tests of a 3-member cluster on a busy 2-core machine keep etcd's defaults so no election happens
     * unless a member is killed.
     */
    record Timing(int heartbeatMillis, int electionMillis) {
        static final Timing FAST = new Timing(10, 100);
        static final Timing DEFAULT = new Timing(100, 1000);
    }

    final List<Member> members = new ArrayList<>();
    private final List<HeldPort> heldPorts = new ArrayList<>();
    private final Path dir;
    private final Tls tls;
    private final Timing timing;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    static boolean binaryAvailable() {
        return Stream.of(System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":"))
                .anyMatch(d -> Files.isExecutable(Path.of(d, "etcd")));
    }

    static final String MISSING = "the etcd binary is not on PATH: install it with `apt-get install -y etcd-server "
            + "etcd-client` (.ci/run does) to run the etcd registry tests";

    /** Starts {@code size} members and waits until every one of them serves clients. */
    static EtcdCluster start(int size, Path dir, Timing timing, Tls tls) throws Exception {
        EtcdCluster cluster = new EtcdCluster(dir, timing, tls);
        try {
            for (int i = 0; i < size; i++) {
                cluster.members.add(cluster.new Member(i, cluster.hold(), cluster.hold()));
            }
            String initial = cluster.members.stream().map(m -> m.name + "=" + m.peerUrl())
                    .collect(Collectors.joining(","));
            for (Member m : cluster.members) {
                m.launch(initial, "new");
            }
            for (Member m : cluster.members) {
                m.awaitServing();
            }
            return cluster;
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
    }

    private EtcdCluster(Path dir, Timing timing, Tls tls) {
        this.dir = dir;
        this.timing = timing;
        this.tls = tls;
    }

    /** The registry URL naming every member. */
    String url() {
        return url(members);
    }

    static String url(List<Member> members) {
        return "etcd://" + members.stream().map(m -> "127.0.0.1:" + m.clientPort).collect(Collectors.joining(","));
    }

    Member member(int i) {
        return members.get(i);
    }

    /** The member that currently leads, asked of the live members; waits for an election if there is none. */
    Member leader(Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            for (Member m : members) {
                if (!m.isAlive()) {
                    continue;
                }
                try {
                    JsonNode status = m.status();
                    String leader = status.path("leader").asText();
                    if (!leader.isEmpty() && !leader.equals("0")) {
                        for (Member candidate : members) {
                            if (candidate.isAlive() && leader.equals(candidate.memberId())) {
                                return candidate;
                            }
                        }
                    }
                } catch (IOException e) {
                    // not answering (yet): ask the next one
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no etcd leader among live members within " + timeout.toMillis() + " ms");
            }
            Thread.sleep(50);
        }
    }

    /**
     * Runs {@code etcdctl} against the live members, as an operator would, and returns what it printed. Plain members
     * only; fails the test if etcdctl fails or takes over 10 s.
     */
    String etcdctl(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("etcdctl", "--endpoints", members.stream().filter(Member::isAlive)
                .map(Member::clientUrl).collect(Collectors.joining(",")), "--command-timeout", "5s"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("ETCDCTL_API", "3");
        Process p = pb.start();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                throw new AssertionError("etcdctl " + String.join(" ", args) + " did not finish within 10 s");
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new AssertionError("etcdctl " + String.join(" ", args) + " exited " + p.exitValue() + ": " + out);
            }
            return out;
        } finally {
            p.destroyForcibly();
        }
    }

    /** The lease a key is bound to, as etcdctl prints lease ids (hex); "0" for none, null when the key is absent. */
    String leaseOf(String key) throws Exception {
        JsonNode kvs = JSON.readTree(etcdctl("get", key, "-w", "json")).path("kvs");
        return kvs.isEmpty() ? null : Long.toHexString(kvs.get(0).path("lease").asLong());
    }

    /**
     * A port for a member, held until the cluster closes (see {@link HeldPort}): etcd binds it all the same (Go's
     * listeners allow address reuse), and nothing else can be given it, before the first start or between a kill and
     * a restart; a client reconnecting to a killed member cannot get it as its own local port either. Picked and
     * closed instead, a member once got one port twice (two picks in a row returned the same port).
     */
    private int hold() throws IOException {
        HeldPort p = LoopbackPorts.held();
        heldPorts.add(p);
        return p.port();
    }

    @Override
    public void close() {
        for (Member m : members) {
            m.kill();
        }
        for (HeldPort p : heldPorts) {
            try {
                p.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** One etcd process; it can be killed and started again on the same ports and data dir. */
    final class Member {
        final String name;
        final int clientPort;
        final int peerPort;
        final Path dataDir;
        private Process process;
        private Path log;
        private int starts;
        private String memberId;

        Member(int index, int clientPort, int peerPort) {
            this.name = "m" + index;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.dataDir = dir.resolve(name + ".etcd");
        }

        String peerUrl() {
            return "http://127.0.0.1:" + peerPort;
        }

        String clientUrl() {
            return (tls != null ? "https" : "http") + "://127.0.0.1:" + clientPort;
        }

        /** This member alone, as a registry URL. */
        String url() {
            return EtcdCluster.url(List.of(this));
        }

        long pid() {
            return process.pid();
        }

        boolean isAlive() {
            return process != null && process.isAlive();
        }

        private void launch(String initialCluster, String state) throws IOException {
            starts++;
            log = dir.resolve(name + "-" + starts + ".log");
            List<String> cmd = new ArrayList<>(List.of("etcd",
                    "--name", name,
                    "--data-dir", dataDir.toString(),
                    "--listen-client-urls", clientUrl(),
                    "--advertise-client-urls", clientUrl(),
                    "--listen-peer-urls", peerUrl(),
                    "--initial-advertise-peer-urls", peerUrl(),
                    "--initial-cluster", initialCluster,
                    "--initial-cluster-state", state,
                    "--initial-cluster-token", "weft-test-" + dir.getFileName(),
                    "--heartbeat-interval", String.valueOf(timing.heartbeatMillis()),
                    "--election-timeout", String.valueOf(timing.electionMillis()),
                    "--logger", "zap", "--log-outputs", "stderr"));
            if (tls != null) {
                cmd.addAll(List.of("--cert-file", tls.serverCert().toString(),
                        "--key-file", tls.serverKey().toString(),
                        "--trusted-ca-file", tls.clientCa().toString(),
                        "--client-cert-auth"));
            }
            process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        }

        /** Waits until the member serves clients (it joined a cluster that has a leader). */
        void awaitServing() throws Exception {
            long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
            while (true) {
                String text = Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
                if (text.contains("published local member to cluster") && text.contains("serving client traffic")) {
                    return;
                }
                if (!process.isAlive()) {
                    throw new AssertionError("etcd " + name + " exited with " + process.exitValue() + "; its log:\n"
                            + tail(text));
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("etcd " + name + " not serving within " + START_TIMEOUT.toSeconds()
                            + " s; its log:\n" + tail(text));
                }
                Thread.sleep(20);
            }
        }

        /** SIGKILL, as a crash or a power cut of the member's machine; waits until the process is gone. */
        void kill() {
            if (process != null && process.isAlive()) {
                process.destroyForcibly();
                try {
                    if (!process.waitFor(10, TimeUnit.SECONDS)) {
                        throw new AssertionError("etcd " + name + " (pid " + process.pid() + ") survived SIGKILL");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** Starts the member again on its ports and data dir, and waits until it serves clients. */
        void restart() throws Exception {
            if (isAlive()) {
                throw new IllegalStateException("etcd " + name + " is running");
            }
            String initial = members.stream().map(m -> m.name + "=" + m.peerUrl()).collect(Collectors.joining(","));
            launch(initial, "existing");
            awaitServing();
        }

        /** Starts the member again without waiting: alone, it cannot serve until enough others are back. */
        void restartInBackground() throws IOException {
            String initial = members.stream().map(m -> m.name + "=" + m.peerUrl()).collect(Collectors.joining(","));
            launch(initial, "existing");
        }

        /** This member's raft id, as etcd's JSON gateway spells it (decimal). */
        String memberId() throws IOException {
            if (memberId == null) {
                memberId = status().path("header").path("member_id").asText();
            }
            return memberId;
        }

        /** etcd's maintenance status through its JSON gateway (plain members only). */
        JsonNode status() throws IOException {
            if (tls != null) {
                throw new IllegalStateException("status() is for plain members");
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(clientUrl()
                                + "/v3/maintenance/status")).timeout(Duration.ofSeconds(1))
                        .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 200) {
                    throw new IOException("status of " + name + ": HTTP " + r.statusCode() + " " + r.body());
                }
                return JSON.readTree(r.body());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }

        @Override
        public String toString() {
            return name + "(pid " + (process == null ? "-" : process.pid()) + ", :" + clientPort + ")";
        }
    }

    private static String tail(String text) {
        return text.lines().skip(Math.max(0, text.lines().count() - 30)).collect(Collectors.joining("\n"));
    }

    /** Removes a directory tree a test made; tolerant of files that vanish meanwhile. */
    static void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
