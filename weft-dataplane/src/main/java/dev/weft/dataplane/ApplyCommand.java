package dev.weft.dataplane;

import dev.weft.dataplane.resilience.PolicyDocument;
import dev.weft.registry.Registries;
import dev.weft.registry.Registry;
import dev.weft.registry.cli.ControlPlaneOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code ./weft apply -f FILE}: validates a policy document and stores it in the registry, from where every sidecar
 * picks it up within a second, with no restart. A document with any mistake is refused whole, naming the file, line
 * and key.
 */
@Command(name = "apply", mixinStandardHelpOptions = true,
        description = {"Validates a policy file (YAML: routes, timeouts, retries, limits) and stores it in the registry.",
                "Sidecars apply it within a second, without a restart. See docs/configuration.md for every key."})
public final class ApplyCommand implements Callable<Integer> {

    @Option(names = {"-f", "--file"}, required = true, paramLabel = "FILE", description = "The policy file.")
    Path file;

    @Option(names = "--name", paramLabel = "NAME",
            description = "Name to store it under (default: the file name without extension); the same name replaces it.")
    String name;

    /** The control plane and the operator token it wants for a write (docs/security.md). */
    @Mixin
    ControlPlaneOptions control;

    @Option(names = "--dry-run", description = "Only validate; store nothing.")
    boolean dryRun;

    @Override
    public Integer call() throws Exception {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            System.err.println("weft apply: no such file: " + file);
            return 2;
        }
        try {
            var services = PolicyDocument.parse(file.toString(), text);
            System.out.println("weft apply: " + file + " is valid (" + services.size() + " service(s): "
                    + String.join(", ", services.keySet()) + ")");
        } catch (PolicyDocument.PolicyException e) {
            System.err.println("weft apply: refused: " + e.getMessage());
            return 2;
        }
        if (dryRun) {
            return 0;
        }
        String docName = name != null ? name : file.getFileName().toString().replaceFirst("\\.[^.]*$", "");
        try (Registry r = Registries.open(control.url(), control.credentials())) {
            r.putPolicy(docName, text);
        } catch (java.io.IOException e) {
            System.err.println("weft apply: " + e.getMessage() + (e.getMessage().contains(" 401 ")
                    || e.getMessage().contains(" 403 ") ? " (" + control.hint() + ")" : ""));
            return 1;
        }
        System.out.println("weft apply: stored policy '" + docName + "' in " + control.url()
                + "; sidecars apply it within a second");
        return 0;
    }
}
