package dev.weft.control;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * Policy documents (name → YAML text) with a revision that rises on every change, persisted in the data dir
 * ({@code policies.json}, replaced atomically after fsync) so a restart loses none. Validation is the writer's job
 * ({@code ./weft apply} refuses a bad document before it gets here); the store keeps text, sidecars parse it.
 *
 * <p>Threads: any; every method is synchronized (policy changes are rare and tiny). Waiters are called outside the
 * lock.
 */
final class PolicyStore {
    static final String FILE = "policies.json";
    private static final ObjectMapper JSON = JsonMapper.builder().build();

    private final Path file;
    private long revision;
    private final TreeMap<String, String> policies = new TreeMap<>();
    private final List<Consumer<ControlBackend.Policies>> waiters = new ArrayList<>();

    PolicyStore(Path dataDir) throws IOException {
        this.file = dataDir.resolve(FILE);
        if (Files.exists(file)) {
            ControlBackend.Policies s = JSON.readValue(file.toFile(), ControlBackend.Policies.class);
            revision = s.revision();
            if (s.policies() != null) {
                policies.putAll(s.policies());
            }
        }
    }

    synchronized ControlBackend.Policies snapshot() {
        return new ControlBackend.Policies(revision, Map.copyOf(policies));
    }

    /** Stores (or with null, removes) a document; persisted before watchers hear of it. */
    ControlBackend.Policies put(String name, String document) throws IOException {
        ControlBackend.Policies s;
        List<Consumer<ControlBackend.Policies>> toWake;
        synchronized (this) {
            if (document == null) {
                policies.remove(name);
            } else {
                policies.put(name, document);
            }
            revision++;
            s = new ControlBackend.Policies(revision, Map.copyOf(policies));
            persist(s);
            toWake = new ArrayList<>(waiters);
            waiters.clear();
        }
        toWake.forEach(w -> w.accept(s));
        return s;
    }

    /**
     * Calls {@code waiter} with the current snapshot at once if it is past {@code revision}, else at the next change.
     * Returns a handle that removes the waiter (for a long poll that timed out or whose client left).
     */
    Runnable awaitChange(long revision, Consumer<ControlBackend.Policies> waiter) {
        ControlBackend.Policies now;
        synchronized (this) {
            if (this.revision == revision) {
                waiters.add(waiter);
                return () -> {
                    synchronized (this) {
                        waiters.remove(waiter);
                    }
                };
            }
            now = new ControlBackend.Policies(this.revision, Map.copyOf(policies));
        }
        waiter.accept(now);
        return () -> {};
    }

    private void persist(ControlBackend.Policies s) throws IOException {
        Path tmp = file.resolveSibling(FILE + ".tmp");
        Files.write(tmp, JSON.writeValueAsBytes(s));
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
