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
}
