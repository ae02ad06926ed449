package dev.weft.registry.etcd;

import dev.weft.registry.Registries;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** How an {@code etcd://} URL is read, and what it says when it is wrong. No etcd needed. */
class EtcdSettingsTest {

    @TempDir
    Path dir;

    private static EtcdSettings parse(String url) {
        return EtcdSettings.parse(URI.create(url), Map.of());
    }

    @Test
    void members_are_listed_in_order_with_the_default_port_filled_in() {
        EtcdSettings s = parse("etcd://10.0.0.1:2379,10.0.0.2,etcd-3.internal:32379");

        assertThat(s.endpoints()).containsExactly("10.0.0.1:2379", "10.0.0.2:2379", "etcd-3.internal:32379");
        assertThat(s.tls()).isFalse();
        assertThat(s.user()).isNull();
        assertThat(s.root()).isEqualTo("/weft");
        assertThat(s.target()).isEqualTo("10.0.0.1:2379,10.0.0.2:2379,etcd-3.internal:32379");
    }

    @Test
    void giving_a_ca_or_a_client_certificate_turns_tls_on() throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
        Path cert = Files.writeString(dir.resolve("c.pem"), "x");
        Path key = Files.writeString(dir.resolve("k.pem"), "x");

        assertThat(parse("etcd://h:2379?ca=" + ca).tls()).isTrue();
        EtcdSettings s = parse("etcd://h:2379?cert=" + cert + "&key=" + key);
        assertThat(s.tls()).isTrue();
        assertThat(s.cert()).isEqualTo(cert);
        assertThat(parse("etcd://h:2379?tls=true").tls()).isTrue();
    }

    @Test
    void credentials_come_from_the_url_a_password_file_or_the_environment() throws Exception {
        Path secret = Files.writeString(dir.resolve("secret"), "s3cret\n");

        assertThat(parse("etcd://h?user=weft&password=p").password()).isEqualTo("p");
        assertThat(parse("etcd://h?user=weft&password-file=" + secret).password()).isEqualTo("s3cret");
        EtcdSettings fromEnv = EtcdSettings.parse(URI.create("etcd://h"),
                Map.of("WEFT_ETCD_USER", "weft", "WEFT_ETCD_PASSWORD", "env-secret"));
        assertThat(fromEnv.user()).isEqualTo("weft");
        assertThat(fromEnv.password()).isEqualTo("env-secret");
        assertThat(fromEnv.toString()).doesNotContain("env-secret").contains("user=weft");
    }

    @Test
    void the_key_prefix_can_be_chosen_so_two_meshes_share_one_cluster() {
        assertThat(parse("etcd://h?prefix=/weft-staging").root()).isEqualTo("/weft-staging");
        assertThatThrownBy(() -> new EtcdRegistry(URI.create("etcd://127.0.0.1:1?prefix=weft/")))
                .hasMessageContaining("invalid etcd key prefix 'weft/'").hasMessageContaining("e.g. /weft");
    }

    @Test
    void mistakes_are_named_with_what_was_expected() throws Exception {
        assertThatThrownBy(() -> parse("etcd://h?tsl=true"))
                .hasMessage("unknown etcd URL option 'tsl' (known: ca, cert, key, password, password-file, prefix, "
                        + "tls, user)");
        assertThatThrownBy(() -> parse("etcd://h:70000")).hasMessageContaining("invalid etcd member 'h:70000'")
                .hasMessageContaining("expected HOST:PORT");
        assertThatThrownBy(() -> parse("etcd://h?user=weft")).hasMessageContaining("has no password")
                .hasMessageContaining("WEFT_ETCD_PASSWORD");
        assertThatThrownBy(() -> parse("etcd://h?password=p")).hasMessageContaining("no user");
        assertThatThrownBy(() -> parse("etcd://h?cert=" + Files.writeString(dir.resolve("c"), "x")))
                .hasMessageContaining("needs both cert=PATH and key=PATH");
        assertThatThrownBy(() -> parse("etcd://h?ca=/nonexistent/ca.pem"))
                .hasMessageContaining("ca=/nonexistent/ca.pem: no readable file there");
        assertThatThrownBy(() -> parse("etcd://h/weft")).hasMessageContaining("?prefix=");
        assertThatThrownBy(() -> parse("etcd://h?tls=yes")).hasMessageContaining("expected true or false");
    }

    @Test
    void a_key_in_pkcs1_or_sec1_form_is_refused_with_the_command_that_converts_it() throws Exception {
        Path cert = Files.writeString(dir.resolve("client.pem"), "x");
        Path key = Files.writeString(dir.resolve("client.key"), "-----BEGIN EC PRIVATE KEY-----\nAA==\n"
                + "-----END EC PRIVATE KEY-----\n");

        assertThatThrownBy(() -> Registries.open("etcd://127.0.0.1:1?cert=" + cert + "&key=" + key))
                .hasMessageContaining("is not an unencrypted PKCS#8 key")
                .hasMessageContaining("openssl pkcs8 -topk8 -nocrypt");
    }

    @Test
    void passwords_never_appear_in_error_messages() {
        assertThatThrownBy(() -> parse("etcd://h:x?user=u&password=hunter2"))
                .hasMessageNotContaining("hunter2").hasMessageContaining("password=***");
    }

    @Test
    void the_etcd_scheme_is_found_through_the_service_loader() {
        try (var registry = Registries.open("etcd://127.0.0.1:1")) {
            assertThat(registry).isInstanceOf(EtcdRegistry.class);
            assertThat(registry.health().backend()).isEqualTo("etcd");
            assertThat(registry.health().target()).isEqualTo("127.0.0.1:1");
        }
    }
}
