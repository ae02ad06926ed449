package dev.weft.control.ca;

import java.time.Instant;

/**
 * A join token as made: the one place its secret appears, handed once to whoever asked. {@link #toString} leaves the
 * secret out, so logging one is safe.
 *
 * @param token     the secret a sidecar reads from its {@code --token-file}
 * @param id        a name for it in logs and errors (from its hash; says nothing about the secret)
 * @param singleUse good for one certificate only
 */
public record JoinToken(String token, String id, String service, Instant expiresAt, boolean singleUse) {
    @Override
    public String toString() {
        return "join token " + id + " for service '" + service + "', valid until " + expiresAt
                + (singleUse ? " (single use)" : "");
    }
}
