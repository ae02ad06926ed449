package dev.weft.control;

import dev.weft.registry.Endpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The store with its file and sweeper, on a clock the test moves. */
class RegistryStoreTest {
    private static final Duration WAIT = Duration.ofSeconds(2);

    @TempDir
    Path dir;
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final List<RegistryStore> open = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeStores() {
        open.forEach(RegistryStore::close);
    }

    private RegistryStore openStore() throws IOException {
        RegistryStore store = RegistryStore.open(dir, clock::get);
        open.add(store);
        return store;
    }

    private void closeStore(RegistryStore store) {
        store.close();
        open.remove(store);
    }

    private static Endpoint endpoint(String id) {
        return new Endpoint("provider", id, "127.0.0.1", 7001, 1, 0, Map.of());
    }

    private static <T> T done(CompletableFuture<T> f) throws Exception {
        return f.get(5, TimeUnit.SECONDS);
    }

    /** Endpoint p1 on a lease of {@code ttlMillis}, and the lines a watcher of its service gets (the first already). */
    private static List<String> p1Watched(RegistryStore store, long ttlMillis) throws Exception {
        String lease = done(store.grantLease(ttlMillis)).leaseId();
        done(store.putEndpoint(endpoint("p1"), lease));
        List<String> lines = new CopyOnWriteArrayList<>();
        done(store.subscribe("provider", -1, line -> lines.add(new String(line, StandardCharsets.UTF_8).strip())));
        return lines;
    }

    @Test
    void registrations_survive_a_restart_with_fresh_leases_and_a_revision_that_keeps_growing() throws Exception {
        RegistryStore first = openStore();
        String lease = done(first.grantLease(1000)).leaseId();
        done(first.putEndpoint(endpoint("p1"), lease));
        long revision = done(first.revision());
        closeStore(first);

        clock.addAndGet(TimeUnit.MINUTES.toNanos(5));   // down far longer than the TTL
        RegistryStore second = openStore();

        assertThat(done(second.snapshot("provider")).endpoints()).extracting(Endpoint::id).containsExactly("p1");
        assertThat(done(second.keepAlive(lease)).endpoints()).isEqualTo(1);
        assertThat(done(second.revision())).isEqualTo(revision);
        done(second.putEndpoint(endpoint("p2"), lease));
        assertThat(done(second.revision())).isGreaterThan(revision);
    }

    @Test
    void a_second_store_on_the_same_data_dir_is_refused() throws Exception {
        openStore();

        assertThatThrownBy(this::openStore).isInstanceOf(IOException.class)
                .hasMessageContaining("in use by another control plane");
    }

    @Test
    void the_sweeper_expires_leases_and_tells_watchers() throws Exception {
        RegistryStore store = openStore();
        List<String> lines = p1Watched(store, 1000);
        assertThat(lines).singleElement().asString().contains("\"p1\"");

        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(1000));

        await().atMost(WAIT).untilAsserted(() -> assertThat(lines).hasSize(2));
        assertThat(lines.get(1)).contains("\"endpoints\":[]");
        // The expiry was persisted, not just applied in memory.
        closeStore(store);
        assertThat(done(openStore().snapshot("provider")).endpoints()).isEmpty();
    }

    @Test
    void a_watcher_that_saw_the_current_revision_gets_only_later_changes() throws Exception {
        RegistryStore store = openStore();
        String lease = done(store.grantLease(5000)).leaseId();
        long revision = done(store.putEndpoint(endpoint("p1"), lease)).revision();
        List<String> lines = new CopyOnWriteArrayList<>();

        done(store.subscribe("provider", revision, line -> lines.add(new String(line, StandardCharsets.UTF_8))));
        assertThat(lines).isEmpty();
        done(store.putEndpoint(endpoint("p2"), lease));

        assertThat(lines).singleElement().asString().contains("\"p2\"");
    }

    @Test
    void renewing_a_lease_does_not_rewrite_the_state_file() throws Exception {
        RegistryStore store = openStore();
        String lease = done(store.grantLease(5000)).leaseId();
        long written = Files.getLastModifiedTime(store.stateFile()).toMillis();
        Files.setLastModifiedTime(store.stateFile(),
                FileTime.fromMillis(written - 60_000));

        done(store.keepAlive(lease));

        assertThat(Files.getLastModifiedTime(store.stateFile()).toMillis()).isEqualTo(written - 60_000);
    }

    @Test
    void a_change_the_disk_refused_is_written_and_announced_by_the_sweeper_once_the_disk_recovers() throws Exception {
        RegistryStore store = openStore();
        List<String> lines = p1Watched(store, 60_000);
        // A directory where the state file's temporary copy goes: every write fails until it is gone.
        Path blocker = Files.createDirectory(dir.resolve(StateFile.NAME + ".tmp"));
        Files.writeString(blocker.resolve("keep"), "x");

        assertThatThrownBy(() -> done(store.deleteEndpoint("provider", "p1"))).cause()
                .isInstanceOfSatisfying(ControlException.class, e -> assertThat(e.code()).isEqualTo("persistence-failed"));
        Thread.sleep(200); // several retries' worth: none may announce what is not on disk
        assertThat(lines).as("nothing announced before it is written").hasSize(1);

        Files.delete(blocker.resolve("keep"));
        Files.delete(blocker);
        await().atMost(WAIT).untilAsserted(() -> assertThat(lines).hasSize(2));
        assertThat(lines.get(1)).contains("\"endpoints\":[]");
        closeStore(store);
        assertThat(done(openStore().snapshot("provider")).endpoints()).as("the retried write is on disk").isEmpty();
    }
}
