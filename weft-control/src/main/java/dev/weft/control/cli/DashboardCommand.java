package dev.weft.control.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.net.URI;
import java.util.concurrent.Callable;

/**
 * {@code ./weft dashboard}: prints the URL of the control plane's dashboard ({@code /ui/}) and checks that it
 * answers. It opens nothing (no browser): on a server the URL is what an operator needs.
 */
@Command(name = "dashboard", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Prints the URL of the control plane's web dashboard (/ui/) and checks that it answers.",
                "The dashboard shows the service map, charts over the last hour, traces, policies and sidecars."})
public final class DashboardCommand implements Callable<Integer> {

    @Option(names = "--registry", paramLabel = "URL", defaultValue = "weft://127.0.0.1:7700",
            description = "The control plane, as for stat and top (default: ${DEFAULT-VALUE}).")
    String registry;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        String base;
        try {
            base = Http.base(registry);
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("weft dashboard: " + e.getMessage());
            return 2;
        }
        String url = base + "/ui/";
        spec.commandLine().getOut().println(url);
        spec.commandLine().getOut().flush();
        try (Http http = new Http()) {
            http.get(URI.create(url));
            return 0;
        } catch (IOException e) {
            spec.commandLine().getErr().println("weft dashboard: nothing answers there yet (" + e.getMessage()
                    + "); start a control plane with ./weft control");
            return 1;
        }
    }
}
