package dev.weft.control.cli;

import dev.weft.registry.support.Durations;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code ./weft top}: {@code ./weft stat} refreshed every {@code --interval}, in place, until interrupted. Each
 * screen's rates cover the interval since the previous one.
 */
@Command(name = "top", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Live view of the mesh: ./weft stat refreshed every --interval until Ctrl-C."})
public final class TopCommand implements Callable<Integer> {
    private static final String CLEAR = "\033[H\033[2J";

    @Mixin
    SidecarTargets sidecars;

    @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "2s", converter = DurationConverter.class,
            description = "Refresh period (default: ${DEFAULT-VALUE}).")
    Duration interval;

    @Option(names = "--iterations", paramLabel = "N", defaultValue = "0",
            description = "Screens to show before exiting; 0 runs until interrupted (default: ${DEFAULT-VALUE}).")
    int iterations;

    @Option(names = "--no-clear", description = "Print screens one after another instead of redrawing (for logs and pipes).")
    boolean noClear;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (interval.isZero() || interval.isNegative() || iterations < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--interval must be positive and --iterations >= 0");
        }
        try (MeshView view = new MeshView()) {
            List<String> ignored = new ArrayList<>();
            List<MeshView.Target> targets = sidecars.find(view, ignored);
            List<MeshStats.Scrape> previous = view.scrape(targets, ignored);
            long previousAt = System.nanoTime();
            for (int i = 0; iterations == 0 || i < iterations; i++) {
                Thread.sleep(interval.toMillis());
                List<String> notes = new ArrayList<>();
                // Sidecars come and go: look them up again every screen.
                targets = sidecars.find(view, notes);
                List<MeshStats.Scrape> now = view.scrape(targets, notes);
                long nowAt = System.nanoTime();
                MeshStats.Report report = MeshStats.fromScrapes(previous, now, (nowAt - previousAt) / 1e9, notes);
                out.print((noClear ? "" : CLEAR) + "weft top  " + LocalTime.now().truncatedTo(ChronoUnit.SECONDS)
                        + "  every " + Durations.format(interval) + "  (Ctrl-C to quit)\n\n" + MeshStats.render(report));
                out.println();
                out.flush();
                previous = now;
                previousAt = nowAt;
            }
            return 0;
        } catch (IllegalArgumentException e) {
            err.println("weft top: " + e.getMessage());
            return 2;
        } catch (IOException e) {
            err.println("weft top: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 130;
        }
    }
}
