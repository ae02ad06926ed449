package dev.weft.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The operator token end to end, as a user meets it: {@code ./weft control} generates it in its default data dir,
 * {@code token create} and {@code apply} run from the same directory find it without a flag, and the same commands
 * from elsewhere are refused 401 until given {@code --admin-token-file} (docs/security.md).
 */
class OperatorTokenTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @Test
    void theCliFindsTheLocalControlPlanesTokenAndAWriteWithoutItIsRefused(@TempDir Path dir) throws Exception {
        Path home = Files.createDirectories(dir.resolve("home"));
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Path policy = Files.writeString(dir.resolve("timeouts.yaml"), "services:\n  provider:\n    timeout: 2s\n");
        try (ChildJvm control = ChildJvm.start("control", dir, home, "control", "--listen", "127.0.0.1:0")) {
            String registry = "weft://127.0.0.1:" + control.awaitLine("listening on [^:]+:(\\d+)", WAIT);
            Path tokenFile = home.resolve(".weft/control/admin.token");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(tokenFile))).isEqualTo("rw-------");
            String token = Files.readString(tokenFile).strip();
            assertThat(control.tail()).contains("operator token generated in").contains(".weft/control/admin.token")
                    .doesNotContain(token);

            ChildJvm made = ChildJvm.start("token-home", dir, home, "token", "create", "--service", "provider",
                    "--registry", registry);
            assertThat(made.awaitExit(WAIT)).as(made.tail()).isZero();
            assertThat(made.tail()).contains("weft_jt_");
            ChildJvm applied = ChildJvm.start("apply-home", dir, home, "apply", "-f", policy.toString(),
                    "--registry", registry);
            assertThat(applied.awaitExit(WAIT)).as(applied.tail()).isZero();
            assertThat(applied.tail()).contains("stored policy 'timeouts'");

            ChildJvm refusedToken = ChildJvm.start("token-elsewhere", dir, elsewhere, "token", "create", "--service",
                    "provider", "--registry", registry);
            assertThat(refusedToken.awaitExit(WAIT)).isEqualTo(1);
            assertThat(refusedToken.tail()).contains("refused: 401").contains("no operator token sent");
            ChildJvm refusedApply = ChildJvm.start("apply-elsewhere", dir, elsewhere, "apply", "-f",
                    policy.toString(), "--registry", registry);
            assertThat(refusedApply.awaitExit(WAIT)).isEqualTo(1);
            assertThat(refusedApply.tail()).contains("401").contains("no operator token sent");

            ChildJvm given = ChildJvm.start("apply-given", dir, elsewhere, "apply", "-f", policy.toString(),
                    "--registry", registry, "--admin-token-file", tokenFile.toString());
            assertThat(given.awaitExit(WAIT)).as(given.tail()).isZero();
        }
    }
}
