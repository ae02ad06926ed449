package dev.weft.testing;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.List;

/**
 * Fails a test class if any Netty buffer it allocated was garbage collected without being released.
 * Registered for every test class through JUnit's extension auto-detection (enabled in the parent POM).
 */
public final class LeakCheckExtension implements AfterAllCallback {
    @Override
    public void afterAll(ExtensionContext context) {
        List<String> leaks = LeakRecorder.drain();
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " Netty buffer leak(s) detected after "
                    + context.getDisplayName() + ":\n" + String.join("\n", leaks));
        }
    }
}
