package dev.weft.control;

import dev.weft.registry.Endpoint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StateFileTest {
    @TempDir
    Path dir;

    private static StateFile.Persisted sample(long revision) {
        Endpoint p1 = new Endpoint("provider", "p1", "127.0.0.1", 7001, 2, 10, Map.of("zone", "a"));
        return new StateFile.Persisted(StateFile.FORMAT, revision,
                List.of(new StateFile.PersistedLease("L1", 3000, "provider")),
                List.of(new StateFile.PersistedService("provider", revision,
                        List.of(new StateFile.PersistedEndpoint(p1, "L1")))));
    }

    @Test
    void a_saved_state_loads_back_unchanged() throws IOException {
        StateFile file = new StateFile(dir);

        file.save(sample(7));

        assertThat(file.load()).contains(sample(7));
    }

    @Test
    void a_state_file_written_before_lease_owners_were_recorded_loads_with_no_owner() throws IOException {
        Files.writeString(dir.resolve(StateFile.NAME), """
                {"format": 1, "revision": 4, "leases": [{"id": "L1", "ttlMillis": 3000}],
                 "services": [{"name": "provider", "revision": 4, "endpoints": [{"endpoint": {"service": "provider",
                   "id": "p1", "host": "127.0.0.1", "port": 7001, "weight": 1, "capacity": 0, "metadata": {}},
                   "leaseId": "L1"}]}]}
                """);

        StateFile.Persisted loaded = new StateFile(dir).load().orElseThrow();

        assertThat(loaded.leases()).containsExactly(new StateFile.PersistedLease("L1", 3000, null));
        ControlBackend.LeaseInfo lease = RegistryState.restore(loaded, 0).lease("L1", 0);
        assertThat(lease.owner()).as("owned by its endpoints' service, as before (LeaseOwners)").isNull();
        assertThat(lease.endpoints()).containsExactly("provider/p1");
    }

    @Test
    void a_new_data_dir_has_no_state() throws IOException {
        assertThat(new StateFile(dir).load()).isEmpty();
    }

    @Test
    void saving_replaces_the_previous_state_and_leaves_no_temp_file() throws IOException {
        StateFile file = new StateFile(dir);
        file.save(sample(1));

        file.save(sample(2));

        assertThat(file.load()).contains(sample(2));
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly(StateFile.NAME);
        }
    }

    @Test
    void a_temp_file_left_by_a_crash_mid_write_is_ignored() throws IOException {
        StateFile file = new StateFile(dir);
        file.save(sample(3));
        Files.writeString(dir.resolve(StateFile.NAME + ".tmp"), "{\"format\": 1, \"revis");

        assertThat(file.load()).contains(sample(3));
        assertThat(dir.resolve(StateFile.NAME + ".tmp")).doesNotExist();
    }

    @Test
    void an_unreadable_state_file_is_reported_with_its_path_and_what_to_do() throws IOException {
        Files.writeString(dir.resolve(StateFile.NAME), "not json");

        assertThatThrownBy(() -> new StateFile(dir).load())
                .isInstanceOf(IOException.class)
                .hasMessageContaining(dir.resolve(StateFile.NAME).toString())
                .hasMessageContaining("move it away to start empty");
    }

    @Test
    void a_state_file_of_another_format_is_refused() throws IOException {
        Files.writeString(dir.resolve(StateFile.NAME), "{\"format\": 99, \"revision\": 1}");

        assertThatThrownBy(() -> new StateFile(dir).load()).hasMessageContaining("unsupported state format 99");
    }
}
