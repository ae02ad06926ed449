package dev.weft.control.cli;

import dev.weft.registry.cli.ControlPlaneOptions;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Which sidecars {@code weft stat} and {@code weft top} read: every one the control plane knows of, or the admin
 * listeners named with {@code --admin}. A picocli mixin, so both commands take the same flags with the same words.
 */
final class SidecarTargets {
    /** The control plane to find the sidecars through, and the operator token it may want. */
    @Mixin
    ControlPlaneOptions control;

    @Option(names = "--admin", paramLabel = "HOST:PORT",
            description = "Repeatable. Read these sidecar admin listeners instead of asking the registry.")
    List<String> admins = new ArrayList<>();

    /** Looked up again on each call (sidecars come and go); an empty answer adds a note saying where it looked. */
    List<MeshView.Target> find(MeshView view, List<String> notes) throws IOException {
        if (!admins.isEmpty()) {
            return MeshView.explicit(admins);
        }
        List<MeshView.Target> found = view.discover(control.url(), control.authorization(), notes);
        if (found.isEmpty()) {
            notes.add("no sidecars found in " + control.url());
        }
        return found;
    }
}
