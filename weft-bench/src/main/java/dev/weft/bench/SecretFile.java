package dev.weft.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/** A file only its owner may read (0600) from the moment it exists: join tokens and private keys in a run directory. */
final class SecretFile {
    private SecretFile() {}

    /** Replaces {@code file} with {@code text}, created with mode 0600 before anything is written to it. */
    static Path write(Path file, String text) throws IOException {
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(file, text);
        return file;
    }
}
