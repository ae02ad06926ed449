package dev.weft.dataplane.fuzz;

/**
 * The data plane's fuzz tests' name for {@link dev.weft.testing.Mutator}, which moved to weft-testing so that the
 * control plane's fuzz tests share it (its corpus and fixed-seed mutation of it, and {@code instrumentOnly}).
 */
public final class Mutator extends dev.weft.testing.Mutator {
    public Mutator(long seed, byte[] special) {
        super(seed, special);
    }
}
