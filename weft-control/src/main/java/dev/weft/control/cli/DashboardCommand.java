package dev.weft.control.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import dev.weft.registry.cli.ControlPlaneOptions;
import picocli.CommandLine.Mixin;
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

    /** The control plane, as for stat and top; the token checks that the dashboard's data answers. */
    @Mixin
    ControlPlaneOptions control;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        String base;
        try {
            base = Http.base(control.url());
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("weft dashboard: " + e.getMessage());
            return 2;
        }
        String url = base + "/ui/";
        spec.commandLine().getOut().println(url);
        spec.commandLine().getOut().flush();
        try (Http http = new Http().trust(control.url())) {
            http.get(URI.create(url));
            // The page's data, as the page will read it: a control plane that wants a token says so here.
            http.get(URI.create(base + "/v1/ui/map"), control.authorization());
            return 0;
        } catch (Http.HttpStatusException e) {
            spec.commandLine().getErr().println("weft dashboard: " + e.getMessage() + (e.status == 401
                    ? "; the page asks for the operator token when it opens" : ""));
            return 1;
        } catch (IOException e) {
            spec.commandLine().getErr().println("weft dashboard: nothing answers there yet (" + e.getMessage()
                    + "); start a control plane with ./weft control");
            return 1;
        }
    }
}
