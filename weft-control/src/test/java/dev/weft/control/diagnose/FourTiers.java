package dev.weft.control.diagnose;

import java.util.ArrayList;
import java.util.List;

/**
 * Hand-built traces of entry → a → b → c (two instances of c), as the sidecars would record them: a root CLIENT span
 * at the entry, then a SERVER and a CLIENT span per hop. Times in µs.
 */
final class FourTiers {
    static final String C1 = "127.0.0.1:7003";
    static final String C2 = "127.0.0.1:7004";

    long aSelf = 1_000;
    long bSelf = 1_000;
    long cSelf = 20_000;
    long bQueue = 0;
    String cEndpoint = C1;
    boolean bFails;
    boolean entryShed;

    FourTiers c(String endpoint, long self) {
        cEndpoint = endpoint;
        cSelf = self;
        return this;
    }

    private static int ids;

    /** One trace starting at {@code t}. */
    List<DiagnoseSpan> trace(long t) {
        String trace = String.format("%032x", ++ids);
        String e = id();
        List<DiagnoseSpan> out = new ArrayList<>();
        if (entryShed) {
            out.add(new DiagnoseSpan(trace, e, null, true, "entry", "a", t, 50, 0, 503, "outbound-limit", null, null));
            return out;
        }
        String a1 = id();
        String a2 = id();
        String b1 = id();
        String b2 = id();
        String c1 = id();
        if (bFails) {
            long bDur = 300;
            long aClient = bDur + 200;
            long aDur = aSelf + aClient;
            long eDur = aDur + 200;
            out.add(new DiagnoseSpan(trace, e, null, true, "entry", "a", t, eDur, t + 10, 500, "500", "127.0.0.1:7001", "a-1"));
            out.add(new DiagnoseSpan(trace, a1, e, false, "a", null, t + 100, aDur, t + 110, 500, "500", null, null));
            out.add(new DiagnoseSpan(trace, a2, a1, true, "a", "b", t + 100 + aSelf / 2, aClient, t + 110 + aSelf / 2, 500, "500", "127.0.0.1:7002", "b-1"));
            out.add(new DiagnoseSpan(trace, b1, a2, false, "b", null, t + 200 + aSelf / 2, bDur, t + 210 + aSelf / 2, 500, "500", null, null));
            return out;
        }
        long cDur = cSelf;
        long bClient = bQueue + 200 + cDur;
        long bDur = bSelf + bClient;
        long aClient = bDur + 200;
        long aDur = aSelf + aClient;
        long eDur = aDur + 200;
        long aStart = t + 100;
        long a2Start = aStart + aSelf / 2;
        long bStart = a2Start + 100;
        long b2Start = bStart + bSelf / 2;
        long cStart = b2Start + bQueue + 100;
        out.add(new DiagnoseSpan(trace, e, null, true, "entry", "a", t, eDur, t + 10, 200, null, "127.0.0.1:7001", "a-1"));
        out.add(new DiagnoseSpan(trace, a1, e, false, "a", null, aStart, aDur, aStart + 10, 200, null, null, null));
        out.add(new DiagnoseSpan(trace, a2, a1, true, "a", "b", a2Start, aClient, a2Start + 10, 200, null, "127.0.0.1:7002", "b-1"));
        out.add(new DiagnoseSpan(trace, b1, a2, false, "b", null, bStart, bDur, bStart + 10, 200, null, null, null));
        out.add(new DiagnoseSpan(trace, b2, b1, true, "b", "c", b2Start, bClient, b2Start + bQueue + 1, 200, null, cEndpoint,
                cEndpoint.equals(C1) ? "c-1" : "c-2"));
        out.add(new DiagnoseSpan(trace, c1, b2, false, "c", null, cStart, cDur, cStart + 10, 200, null, null, null));
        return out;
    }

    private static String id() {
        return String.format("%016x", ++ids);
    }
}
