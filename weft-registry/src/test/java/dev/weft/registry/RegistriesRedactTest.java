package dev.weft.registry;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** /config and logs show a registry URL through {@link Registries#redact}: never a password, everything else kept. */
class RegistriesRedactTest {

    @Test
    void aPasswordInTheUserInfoIsHidden() {
        assertThat(Registries.redact("etcd://weft:s3cret@10.0.0.1:2379,10.0.0.2:2379?prefix=/m"))
                .isEqualTo("etcd://weft:***@10.0.0.1:2379,10.0.0.2:2379?prefix=/m");
    }

    @Test
    void aPasswordOptionIsHiddenAndOtherOptionsStay() {
        assertThat(Registries.redact("etcd://h:2379?user=weft&password=s3cret&ca=/etc/ca.pem&PASSWORD=x"))
                .isEqualTo("etcd://h:2379?user=weft&password=***&ca=/etc/ca.pem&PASSWORD=***");
    }

    @Test
    void aUrlWithoutSecretsIsUnchanged() {
        for (String url : new String[] {"weft://127.0.0.1:7700", "etcd://h:2379?password-file=/run/secret",
                "etcd://user@h:2379", "etcd://h:2379/path@x"}) {
            assertThat(Registries.redact(url)).isEqualTo(url);
        }
        assertThat(Registries.redact(null)).isNull();
    }
}
