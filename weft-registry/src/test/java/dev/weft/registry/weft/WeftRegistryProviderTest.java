package dev.weft.registry.weft;

import dev.weft.registry.Endpoint;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WeftRegistryProviderTest {
    @Test
    void weft_urls_open_a_weft_registry_through_the_service_loader() {
        try (Registry registry = Registries.open("weft://127.0.0.1:7711")) {
            assertThat(registry).isInstanceOf(WeftRegistry.class);
            assertThat(registry.health().backend()).isEqualTo("weft");
            assertThat(registry.health().target()).isEqualTo("127.0.0.1:7711");
            assertThat(registry.health().connected()).isFalse();
            assertThat(registry.health().lastContact()).isNull();
        }
    }

    @Test
    void the_port_defaults_to_7700() {
        try (Registry registry = new WeftRegistry(URI.create("weft://localhost"))) {
            assertThat(registry.health().target()).isEqualTo("localhost:7700");
        }
    }

    @Test
    void a_url_without_a_host_is_refused_with_an_example() {
        assertThatThrownBy(() -> new WeftRegistry(URI.create("weft:provider")))
                .hasMessageContaining("expected weft://HOST:PORT");
    }

    @Test
    void a_ttl_outside_the_supported_range_is_refused() {
        try (Registry registry = new WeftRegistry(URI.create("weft://127.0.0.1:7711"))) {
            assertThatThrownBy(() -> registry.register(
                    new Endpoint("a", "a1", "127.0.0.1", 1, 1, 0, null), Duration.ofMillis(10)))
                    .hasMessageContaining("ttl out of range");
        }
    }

    @Test
    void a_closed_registry_refuses_new_watches() {
        Registry registry = new WeftRegistry(URI.create("weft://127.0.0.1:7711"));
        registry.close();

        assertThatThrownBy(() -> registry.watch("provider", (s, e) -> {}))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }
}
