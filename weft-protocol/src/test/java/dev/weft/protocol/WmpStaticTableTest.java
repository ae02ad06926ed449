package dev.weft.protocol;

import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class WmpStaticTableTest {
    /** A row of the static table in docs/protocol.md: | index | `name` | `value` or empty |. */
    private static final Pattern DOC_ROW = Pattern.compile("^\\|\\s*(\\d+)\\s*\\|\\s*`([^`]+)`\\s*\\|\\s*(?:`([^`]*)`)?\\s*\\|\\s*$");

    @Test
    void the_specification_lists_exactly_the_table_the_code_uses() throws IOException {
        Path spec = Path.of("").toAbsolutePath().resolveSibling("docs").resolve("protocol.md");
        List<String> rows = new ArrayList<>();
        boolean inTable = false;
        for (String line : Files.readAllLines(spec)) {
            if (line.startsWith("#")) {
                inTable = line.toLowerCase().contains("static table");
                continue;
            }
            Matcher m = DOC_ROW.matcher(line);
            if (inTable && m.matches()) {
                rows.add(m.group(1) + " " + m.group(2) + " " + (m.group(3) == null ? "" : m.group(3)));
            }
        }
        List<String> table = new ArrayList<>();
        for (int i = 1; i <= WmpStaticTable.size(); i++) {
            table.add(i + " " + WmpStaticTable.name(i) + " " + WmpStaticTable.value(i));
        }
        assertThat(rows).as("static table rows in " + spec).containsExactlyElementsOf(table);
    }

    @Test
    void entries_are_lower_case_and_unique_and_fit_in_seven_bits() {
        Set<String> seen = new HashSet<>();
        assertThat(WmpStaticTable.size()).isBetween(1, WmpStaticTable.MAX_INDEX);
        for (int i = 1; i <= WmpStaticTable.size(); i++) {
            String name = WmpStaticTable.name(i);
            assertThat(name).as("entry %d", i).isEqualTo(name.toLowerCase()).isNotEmpty();
            assertThat(seen.add(name + "\n" + WmpStaticTable.value(i))).as("entry %d is a duplicate", i).isTrue();
        }
    }

    @Test
    void lookup_prefers_a_full_match_then_the_name_then_nothing() {
        assertThat(WmpStaticTable.lookup("content-type", "application/json")).isEqualTo(0x80 | 2);
        assertThat(WmpStaticTable.lookup("content-type", "image/png")).isEqualTo(1);
        assertThat(WmpStaticTable.lookup("x-forwarded-proto", "https")).isEqualTo(0x80 | 28);
        assertThat(WmpStaticTable.lookup("accept-ranges", "none")).as("first entry with the name").isEqualTo(23);
        assertThat(WmpStaticTable.lookup("x-unknown", "")).isZero();
        assertThat(WmpStaticTable.lookup("Content-Type", "text/plain")).as("names are case-sensitive").isZero();
    }

    @Test
    void an_index_outside_the_table_is_refused_with_the_valid_range() {
        assertThat(WmpStaticTable.contains(0)).isFalse();
        assertThat(WmpStaticTable.contains(WmpStaticTable.size() + 1)).isFalse();
        assertThatThrownBy(() -> WmpStaticTable.name(0))
                .isInstanceOf(IndexOutOfBoundsException.class)
                .hasMessage("static table index 0 (expected 1.." + WmpStaticTable.size() + ")");
    }

    @Test
    void trace_and_request_ids_are_marked_per_request_so_no_decoder_keeps_them_and_nothing_else_is() {
        Set<String> perRequest = new HashSet<>();
        for (int i = 1; i <= WmpStaticTable.size(); i++) {
            if (WmpStaticTable.perRequestValue(i)) {
                perRequest.add(WmpStaticTable.name(i));
            }
        }
        assertThat(perRequest).containsExactlyInAnyOrder("traceparent", "b3", "x-b3-traceid", "x-b3-spanid",
                "x-b3-parentspanid", "x-request-id", "x-correlation-id", "idempotency-key");
    }
}
