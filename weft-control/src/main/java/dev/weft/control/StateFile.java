package dev.weft.control;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.weft.registry.Endpoint;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;

/**
 * The control plane's state on disk: one JSON document, {@code state.json} in the data dir, replaced as a whole
 * after every change.
 *
 * <p>Why a snapshot rather than an append log: the state is small (a few hundred endpoints at most) and changes
 * rarely (registrations, not keepalives, which are not persisted), so rewriting it is cheap and there is no log to
 * compact. Crash safety comes from the write order: temp file, fsync, atomic rename over the old file, fsync of the
 * directory. A {@code kill -9} at any point leaves either the old or the new document, never a torn one.
 */
final class StateFile {
    static final int FORMAT = 1;
    static final String NAME = "state.json";

    record Persisted(int format, long revision, List<PersistedLease> leases, List<PersistedService> services) {
        Persisted {
            leases = leases == null ? List.of() : List.copyOf(leases);
            services = services == null ? List.of() : List.copyOf(services);
        }
    }

    /**
     * @param owner the service of the sidecar that took the lease; null for the operator's, and absent from files
     *              written before owners were recorded (they load as null)
     */
    record PersistedLease(String id, long ttlMillis, String owner) {}

    record PersistedService(String name, long revision, List<PersistedEndpoint> endpoints) {
        PersistedService {
            endpoints = endpoints == null ? List.of() : List.copyOf(endpoints);
        }
    }

    record PersistedEndpoint(Endpoint endpoint, String leaseId) {}

    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private final Path dir;
    private final Path file;
    private final Path temp;

    StateFile(Path dir) {
        this.dir = dir;
        this.file = dir.resolve(NAME);
        this.temp = dir.resolve(NAME + ".tmp");
    }

    Path path() {
        return file;
    }

    /** The last state written, or empty when the data dir is new. */
    Optional<Persisted> load() throws IOException {
        // A leftover temp file is a write that crashed before its rename: the real file is still the truth.
        Files.deleteIfExists(temp);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        Persisted persisted;
        try {
            persisted = JSON.readValue(bytes, Persisted.class);
        } catch (JacksonException | IllegalArgumentException e) {
            String why = e instanceof JacksonException je ? je.getOriginalMessage() : e.getMessage();
            throw new IOException("cannot read control plane state " + file + ": " + why
                    + " (expected a JSON document written by weft control; move it away to start empty)", e);
        }
        if (persisted.format() != FORMAT) {
            throw new IOException("unsupported state format " + persisted.format() + " in " + file
                    + " (expected " + FORMAT + ")");
        }
        return Optional.of(persisted);
    }

    void save(Persisted state) throws IOException {
        byte[] bytes = JSON.writeValueAsBytes(state);
        try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
        try {
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("data dir " + dir + " does not support atomic rename, which crash-safe state needs"
                    + " (expected a local file system)", e);
        }
        syncDirectory();
    }

    /** Makes the rename itself durable; without it a power cut can bring the old file back. */
    private void syncDirectory() {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            // Some file systems refuse to open directories; the rename is still atomic, just not yet durable.
        }
    }
}
