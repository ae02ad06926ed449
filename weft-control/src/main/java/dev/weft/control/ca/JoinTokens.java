package dev.weft.control.ca;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.weft.control.ControlException;
import dev.weft.registry.support.Durations;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * Join tokens: how a sidecar proves, once, which service it runs for. Each token is 256 random bits, bound to one
 * service, with an expiry; a single-use one is good for one certificate. Only each token's SHA-256 is kept (in
 * {@code tokens.json}, mode 0600, beside the root): a copy of the file does not let anyone join. A plain hash is
 * enough because the secret is random, not a password; nothing can be guessed from it.
 *
 * <p>Thread: writes on the CA's thread only ({@link CertificateAuthority}); {@link #authenticate} reads from any thread.
 */
final class JoinTokens {
    static final String FILE = "tokens.json";
    static final String PREFIX = "weft_jt_";
    static final Duration MIN_TTL = Duration.ofSeconds(1);
    static final Duration MAX_TTL = Duration.ofDays(366);
    static final Duration FORGET_AFTER = Duration.ofDays(1);
    private static final int SECRET_BYTES = 32;
    private static final int MAX_TOKEN_CHARS = 128;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final ObjectMapper JSON = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

    /** One token as stored: its hash, never the token. Times in epoch milliseconds. */
    record Stored(String id, String sha256, String service, long createdAt, long expiresAt, boolean singleUse,
                  int uses) {
        Instant expiry() {
            return Instant.ofEpochMilli(expiresAt);
        }
    }

    record Persisted(int format, List<Stored> tokens) {}

    private final Path file;
    private final Clock clock;
    /** Written on the CA's thread only; read from any thread by {@link #authenticate}. */
    private final Map<String, Stored> byHash = new java.util.concurrent.ConcurrentHashMap<>();

    JoinTokens(Path dir, Clock clock) throws IOException {
        this.file = dir.resolve(FILE);
        this.clock = clock;
        try {
            Persisted p = JSON.readValue(Files.readString(file, StandardCharsets.UTF_8), Persisted.class);
            for (Stored s : p.tokens()) {
                byHash.put(s.sha256(), s);
            }
        } catch (NoSuchFileException e) {
            // No token made yet.
        } catch (JacksonException e) {
            throw new IOException("cannot read join tokens " + file + ": " + e.getOriginalMessage()
                    + " (expected the JSON weft control writes; move it away to forget every token)", e);
        }
    }

    JoinToken create(String service, Duration ttl, boolean singleUse) throws IOException {
        if (ttl.compareTo(MIN_TTL) < 0 || ttl.compareTo(MAX_TTL) > 0) {
            throw ControlException.badRequest("token TTL " + Durations.format(ttl) + " out of range (expected "
                    + Durations.format(MIN_TTL) + " to " + MAX_TTL.toDays() + " days)");
        }
        byte[] secret = new byte[SECRET_BYTES];
        RANDOM.nextBytes(secret);
        String token = PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
        String hash = sha256(token);
        long now = clock.millis();
        Stored stored = new Stored(hash.substring(0, 16), hash, service, now, now + ttl.toMillis(), singleUse, 0);
        byHash.put(hash, stored);
        save();
        return new JoinToken(token, stored.id(), service, stored.expiry(), singleUse);
    }

    /**
     * Checks {@code token} for {@code service} without using it up: 401 {@code invalid-token} when unknown, expired
     * or used up, 403 {@code wrong-service} when it is another service's.
     */
    Stored check(String token, String service) {
        Stored s = authenticate(token);
        if (!s.service().equals(service)) {
            throw new ControlException(403, "wrong-service", "join token " + s.id() + " is for service '"
                    + s.service() + "', not '" + service + "'");
        }
        return s;
    }

    /**
     * The stored token, if {@code token} is one that is known, unexpired and not used up (401 {@code invalid-token}
     * otherwise). Safe on any thread (the map is concurrent and its entries immutable), so the API's guard checks a
     * sidecar's registration with its token on the connection's event loop; nothing is used up.
     */
    Stored authenticate(String token) {
        if (token == null || token.length() > MAX_TOKEN_CHARS || !token.startsWith(PREFIX)) {
            throw invalid("malformed join token (expected " + PREFIX + "... from ./weft token create)");
        }
        Stored s = byHash.get(sha256(token));
        if (s == null) {
            throw invalid("unknown join token (not made by this control plane, or forgotten after it expired)");
        }
        if (clock.millis() >= s.expiresAt()) {
            throw invalid("join token " + s.id() + " expired at " + s.expiry()
                    + " (make a new one with ./weft token create --service " + s.service() + ")");
        }
        if (s.singleUse() && s.uses() > 0) {
            throw invalid("join token " + s.id() + " was for one certificate and has been used");
        }
        return s;
    }

    /** Counts a use of a token {@link #check} accepted; a single-use one is spent from here on. */
    void use(Stored s) throws IOException {
        byHash.put(s.sha256(), new Stored(s.id(), s.sha256(), s.service(), s.createdAt(), s.expiresAt(),
                s.singleUse(), s.uses() + 1));
        save();
    }

    /**
     * Tokens expired for a day are dropped when the file is next written: until then a late sidecar is told its token
     * expired (and when), rather than that it is unknown.
     */
    private void save() throws IOException {
        long forgetBefore = clock.millis() - FORGET_AFTER.toMillis();
        byHash.values().removeIf(s -> s.expiresAt() < forgetBefore);
        Issuer.writeAtomically(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(
                new Persisted(1, new ArrayList<>(byHash.values()))));
    }

    static String sha256(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    private static ControlException invalid(String message) {
        return new ControlException(401, "invalid-token", message);
    }
}
