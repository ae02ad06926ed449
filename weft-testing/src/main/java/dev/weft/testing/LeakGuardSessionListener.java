package dev.weft.testing;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Installs {@link LeakRecorder} when the JUnit launcher opens, which is before any test class touches a ByteBuf:
 * Netty creates its leak detectors in static initialisers, so installing later would miss them.
 */
public final class LeakGuardSessionListener implements LauncherSessionListener {
    @Override
    public void launcherSessionOpened(LauncherSession session) {
        LeakRecorder.install();
    }
}
