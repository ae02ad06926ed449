package dev.weft.bench;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Runs the JMH microbenchmarks of {@code dev.weft.bench.jmh} (codec, balancer, request hot path) with the GC
 * profiler, and turns their results into rows: ns/op and bytes allocated per op ({@code gc.alloc.rate.norm}). The
 * hot path's per-hop row is derived: (mesh − direct) / 2, the sidecars' share of one request, per sidecar.
 */
final class JmhRunner {
    static final String PACKAGE = "dev\\.weft\\.bench\\.jmh\\.";

    /**
     * @param benchmark the method's simple class and method name, e.g. {@code CodecBenchmark.decodeRequest}
     * @param params    JMH parameters, e.g. {@code endpoints=3}; empty when none
     */
    record Result(String benchmark, String params, double nsPerOp, double nsError, double bytesPerOp) {}

    private JmhRunner() {}

    /** Runs everything matching {@code include} (a regex on the benchmark's full name). */
    static List<Result> run(Path results, boolean quick, PrintStream log) {
        return run(results, quick, log, PACKAGE);
    }

    static List<Result> run(Path results, boolean quick, PrintStream log, String include) {
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(include)
                .forks(1)
                .warmupIterations(quick ? 2 : 4)
                .warmupTime(TimeValue.seconds(1))
                .measurementIterations(quick ? 3 : 5)
                .measurementTime(TimeValue.seconds(quick ? 1 : 2))
                .addProfiler(GCProfiler.class)
                .result(results.resolve("jmh.json").toString())
                .resultFormat(ResultFormatType.JSON)
                .output(results.resolve("jmh.log").toString());
        Collection<RunResult> runs;
        try {
            runs = new Runner(options.build()).run();
        } catch (RunnerException e) {
            throw new IllegalStateException("JMH failed (see " + results.resolve("jmh.log") + "): " + e.getMessage(), e);
        }
        List<Result> rows = new ArrayList<>();
        for (RunResult run : runs) {
            rows.add(toRow(run));
        }
        log.println("JMH: " + rows.size() + " benchmarks, log in " + results.resolve("jmh.log"));
        return withPerHop(rows);
    }

    private static Result toRow(RunResult run) {
        BenchmarkParams params = run.getParams();
        String name = params.getBenchmark();
        String shortName = name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1);
        String paramText = params.getParamsKeys().stream().map(k -> k + "=" + params.getParam(k))
                .collect(Collectors.joining(" "));
        double nsPerOp = run.getPrimaryResult().getScore();
        double nsError = run.getPrimaryResult().getScoreError();
        org.openjdk.jmh.results.Result<?> alloc = run.getSecondaryResults().get("gc.alloc.rate.norm");
        double bytes = alloc == null ? Double.NaN : alloc.getScore();
        return new Result(shortName, paramText, nsPerOp, Double.isNaN(nsError) ? 0 : nsError, bytes);
    }

    /**
     * Adds a {@code HotPathBenchmark.perHop} row = (mesh − direct) / 2 for each set of parameters (observability on
     * and off) that both ran with.
     */
    static List<Result> withPerHop(List<Result> rows) {
        List<Result> all = new ArrayList<>(rows);
        for (Result mesh : rows) {
            if (!mesh.benchmark().equals("HotPathBenchmark.mesh")) {
                continue;
            }
            Result direct = rows.stream().filter(r -> r.benchmark().equals("HotPathBenchmark.direct")
                    && r.params().equals(mesh.params())).findFirst().orElse(null);
            if (direct != null) {
                String how = "(mesh - direct) / 2";
                all.add(new Result("HotPathBenchmark.perHop", mesh.params().isEmpty() ? how : mesh.params() + ", " + how,
                        (mesh.nsPerOp() - direct.nsPerOp()) / 2, (mesh.nsError() + direct.nsError()) / 2,
                        (mesh.bytesPerOp() - direct.bytesPerOp()) / 2));
            }
        }
        return all;
    }

}
