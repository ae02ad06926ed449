package dev.weft.dataplane.observe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class JsonTextTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void escapesAndEncodesEveryCharacterAsUtf8ThatAJsonParserReadsBack() throws Exception {
        String tricky = "quote\" backslash\\ nl\n cr\r tab\t ctl\u0001 é € 😀 end";
        JsonText j = new JsonText(8); // tiny on purpose: every write must grow the buffer correctly
        j.beginObject().field("s", tricky).field("n", -1234567890123L).field("zero", 0).field("min", Long.MIN_VALUE)
                .name("hex").hexValue(0xa3ce929d0e0e4736L).name("trace").hexValue(1L, 0xffL)
                .name("q").quotedValue(200).name("nanos").quotedValue(17, "000").name("lower").lowerValue("GET", "Orders")
                .name("slice").value("/1.2.3.4:80", 1, 8).name("ms").millis(12_005).field("nul", null).endObject();
        JsonNode n = JSON.readTree(j.array(), 0, j.length());
        assertThat(n.get("s").asText()).isEqualTo(tricky);
        assertThat(n.get("n").asLong()).isEqualTo(-1234567890123L);
        assertThat(n.get("zero").asLong()).isZero();
        assertThat(n.get("min").asLong()).isEqualTo(Long.MIN_VALUE);
        assertThat(n.get("hex").asText()).isEqualTo("a3ce929d0e0e4736");
        assertThat(n.get("trace").asText()).isEqualTo("000000000000000100000000000000ff");
        assertThat(n.get("q").asText()).isEqualTo("200");
        assertThat(n.get("nanos").asText()).isEqualTo("17000");
        assertThat(n.get("lower").asText()).isEqualTo("get orders");
        assertThat(n.get("slice").asText()).isEqualTo("1.2.3.4");
        assertThat(n.get("ms").asText()).isEqualTo("12.005");
        assertThat(n.get("nul").isNull()).isTrue();
    }

    @Test
    void resetReusesTheBufferForTheNextDocument() throws Exception {
        JsonText j = new JsonText(64);
        j.beginArray().value("first").endArray();
        j.reset().beginArray().value(2).endArray();
        assertThat(j.toString()).isEqualTo("[2]");
    }

    @Test
    void numbersOfEveryLengthAndStringsWrittenAgainFromTheCacheReadBackTheSame() throws Exception {
        JsonText j = new JsonText(8);
        long[] numbers = {0, 7, 9, 10, 99, 100, 101, 999, 1000, 12345, 1_700_000_000_123_456L, 999_999_999_999_999_999L,
                1_000_000_000_000_000_000L, Long.MAX_VALUE, -5, -100, Long.MIN_VALUE + 1};
        // Many distinct strings, each written twice (the second time from the cache) and some cut by slots shared
        // with the others: every one must come back as it was.
        String[] strings = new String[3000];
        for (int i = 0; i < strings.length; i++) {
            strings[i] = (i % 7 == 0 ? "é\"" : "s") + i;
        }
        j.beginArray();
        for (int round = 0; round < 2; round++) {
            for (long v : numbers) {
                j.value(v);
            }
            for (String v : strings) {
                j.value(v);
            }
        }
        j.endArray();
        JsonNode n = JSON.readTree(j.array(), 0, j.length());
        int k = 0;
        for (int round = 0; round < 2; round++) {
            for (long v : numbers) {
                assertThat(n.get(k++).asLong()).isEqualTo(v);
            }
            for (String v : strings) {
                assertThat(n.get(k++).asText()).isEqualTo(v);
            }
        }
    }
}
