package dev.weft.control;

import dev.weft.registry.Endpoint;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Lease and revision rules, driven by a hand-moved clock: no waiting. */
class RegistryStateTest {
    private final RegistryState state = new RegistryState();
    private long now = 1_000_000_000L;

    private void advance(long millis) {
        now += TimeUnit.MILLISECONDS.toNanos(millis);
    }

    private static Endpoint endpoint(String id, int port) {
        return new Endpoint("provider", id, "127.0.0.1", port, 1, 0, Map.of());
    }

    @Test
    void a_lease_kept_alive_in_time_never_expires() {
        state.grantLease("L1", 1000, now);
        state.putEndpoint(endpoint("p1", 7001), "L1", now);

        for (int i = 0; i < 10; i++) {
            advance(900);
            assertThat(state.expire(now)).isEmpty();
            state.keepAlive("L1", now);
        }

        assertThat(state.snapshot("provider").endpoints()).extracting(Endpoint::id).containsExactly("p1");
    }

    @Test
    void a_lease_left_alone_expires_after_its_ttl_and_takes_its_endpoints_along() {
        state.grantLease("L1", 1000, now);
        state.putEndpoint(endpoint("p1", 7001), "L1", now);
        long before = state.revision();

        advance(999);
        assertThat(state.expire(now)).isEmpty();
        advance(1);

        assertThat(state.expire(now)).containsExactly("provider");
        assertThat(state.snapshot("provider").endpoints()).isEmpty();
        assertThat(state.snapshot("provider").revision()).isGreaterThan(before);
        assertThatThrownBy(() -> state.keepAlive("L1", now))
                .isInstanceOfSatisfying(ControlException.class, e -> assertThat(e.code()).isEqualTo("unknown-lease"));
    }

    @Test
    void a_lease_past_its_ttl_is_gone_even_before_the_sweeper_removes_it() {
        state.grantLease("L1", 1000, now);
        advance(1500);

        assertThatThrownBy(() -> state.keepAlive("L1", now)).isInstanceOf(ControlException.class);
        assertThatThrownBy(() -> state.putEndpoint(endpoint("p1", 7001), "L1", now))
                .hasMessageContaining("unknown lease 'L1'");
    }

    @Test
    void an_endpoint_taken_over_by_a_new_lease_survives_the_old_lease_expiring() {
        state.grantLease("old", 1000, now);
        state.putEndpoint(endpoint("p1", 7001), "old", now);
        state.grantLease("new", 5000, now);

        assertThat(state.putEndpoint(endpoint("p1", 7001), "new", now)).isEqualTo(RegistryState.PutResult.REBOUND);
        advance(1000);

        assertThat(state.expire(now)).isEmpty();
        assertThat(state.snapshot("provider").endpoints()).extracting(Endpoint::id).containsExactly("p1");
        assertThat(state.keepAlive("new", now)).isEqualTo(1);
    }

    @Test
    void every_change_raises_the_revision_and_repeating_a_put_changes_nothing() {
        state.grantLease("L1", 5000, now);

        assertThat(state.putEndpoint(endpoint("p1", 7001), "L1", now)).isEqualTo(RegistryState.PutResult.CHANGED);
        long r1 = state.revision();
        assertThat(state.putEndpoint(endpoint("p1", 7001), "L1", now)).isEqualTo(RegistryState.PutResult.UNCHANGED);
        assertThat(state.revision()).isEqualTo(r1);
        assertThat(state.putEndpoint(endpoint("p1", 7009), "L1", now)).isEqualTo(RegistryState.PutResult.CHANGED);
        long r2 = state.revision();
        assertThat(state.deleteEndpoint("provider", "p1")).isTrue();

        assertThat(r2).isGreaterThan(r1);
        assertThat(state.revision()).isGreaterThan(r2);
        assertThat(state.deleteEndpoint("provider", "p1")).isFalse();
    }

    @Test
    void revoking_a_lease_removes_its_endpoints_in_one_revision() {
        state.grantLease("L1", 5000, now);
        state.putEndpoint(endpoint("p1", 7001), "L1", now);
        state.putEndpoint(new Endpoint("consumer", "c1", "127.0.0.1", 7101, 1, 0, Map.of()), "L1", now);
        long before = state.revision();

        assertThat(state.revokeLease("L1")).containsExactlyInAnyOrder("provider", "consumer");

        assertThat(state.revision()).isEqualTo(before + 1);
        assertThat(state.services()).extracting(ControlBackend.ServiceSummary::endpoints).containsOnly(0);
    }

    @Test
    void a_ttl_outside_the_supported_range_is_refused_with_the_range() {
        assertThatThrownBy(() -> state.grantLease("L1", 10, now))
                .hasMessage("ttlMillis out of range: 10 (expected 100..600000)");
    }

    @Test
    void restoring_gives_every_lease_a_full_ttl_and_keeps_revisions() {
        state.grantLease("L1", 1000, now);
        state.putEndpoint(endpoint("p1", 7001), "L1", now);
        StateFile.Persisted saved = state.toPersisted();

        long later = now + TimeUnit.HOURS.toNanos(1);
        RegistryState restored = RegistryState.restore(saved, later);

        assertThat(restored.revision()).isEqualTo(state.revision());
        assertThat(restored.expire(later + TimeUnit.MILLISECONDS.toNanos(999))).isEmpty();
        assertThat(restored.snapshot("provider")).isEqualTo(state.snapshot("provider"));
        assertThat(restored.leases(later)).singleElement()
                .satisfies(l -> assertThat(l.endpoints()).isEqualTo(List.of("provider/p1")));
        assertThat(restored.expire(later + TimeUnit.MILLISECONDS.toNanos(1000))).containsExactly("provider");
    }
}
