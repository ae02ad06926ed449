package dev.weft.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Collects Netty's "LEAK:" reports so a test run can fail on them instead of only logging them.
 *
 * <p>Netty reports a leak only when a buffer that was never released has been garbage collected and a later
 * allocation polls the detector's reference queue; {@link #drain()} forces both so leaks surface before a test
 * class is declared green. Installed once per JVM by {@link LeakGuardSessionListener}, before any buffer class
 * is initialised.
 */
public final class LeakRecorder {
    private static final List<String> LEAKS = new ArrayList<>();
    private static volatile boolean installed;

    private LeakRecorder() {}

    static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        if (ResourceLeakDetector.getLevel().ordinal() < ResourceLeakDetector.Level.PARANOID.ordinal()) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        }
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new Factory());
    }

    /** Runs the GC, pokes the detectors and returns (and forgets) every leak reported so far. */
    public static List<String> drain() {
        for (int round = 0; round < 3; round++) {
            System.gc();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            // Each allocation of a tracked buffer polls the shared detector's queue and reports what it finds.
            for (int i = 0; i < 4; i++) {
                ByteBuf a = PooledByteBufAllocator.DEFAULT.directBuffer(8);
                a.release();
                ByteBuf b = UnpooledByteBufAllocator.DEFAULT.heapBuffer(8);
                b.release();
            }
        }
        synchronized (LEAKS) {
            List<String> copy = List.copyOf(LEAKS);
            LEAKS.clear();
            return copy;
        }
    }

    private static void record(String report) {
        synchronized (LEAKS) {
            LEAKS.add(report);
        }
    }

    private static final class Factory extends ResourceLeakDetectorFactory {
        @Override
        @SuppressWarnings("deprecation")
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval, long maxActive) {
            return new Recording<>(resource, samplingInterval);
        }
    }

    private static final class Recording<T> extends ResourceLeakDetector<T> {
        Recording(Class<T> resource, int samplingInterval) {
            super(resource, samplingInterval);
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            super.reportTracedLeak(resourceType, records);
            record("LEAK: " + resourceType + records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            super.reportUntracedLeak(resourceType);
            record("LEAK: " + resourceType + " (untraced)");
        }
    }
}
