package dev.weft.registry.support;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JsonValuesTest {
    @Test
    void aDocumentReadsIntoMapsListsAndScalarsAndWritesBackTheSame() throws IOException {
        String json = "{\"s\":\"x\\\"y\",\"n\":12,\"big\":9007199254740993,\"f\":1.5,\"t\":true,\"z\":null,"
                + "\"a\":[1,\"two\",{\"k\":\"v\"}],\"o\":{}}";
        Map<String, Object> m = JsonValues.readObject(json);
        assertThat(JsonValues.string(m, "s")).isEqualTo("x\"y");
        assertThat(JsonValues.number(m, "n")).isEqualTo(12);
        assertThat(JsonValues.number(m, "big")).isEqualTo(9007199254740993L);
        assertThat(JsonValues.number(m, "missing")).isZero();
        assertThat(JsonValues.list(m, "a")).hasSize(3);
        assertThat(new String(JsonValues.write(m, false), StandardCharsets.UTF_8)).isEqualTo(json);
    }

    @Test
    void aFieldOfTheWrongTypeIsAnErrorNamingIt() throws IOException {
        Map<String, Object> m = JsonValues.readObject("{\"port\":\"80\",\"meta\":{\"a\":1}}");
        assertThatThrownBy(() -> JsonValues.integer(m, "port")).hasMessage("field 'port': expected an integer, got a string");
        assertThatThrownBy(() -> JsonValues.strings(m, "meta")).hasMessage("field 'meta.a': expected a string, got a number");
        assertThatThrownBy(() -> JsonValues.readObject("[1]")).hasMessageContaining("expected a JSON object");
        assertThatThrownBy(() -> JsonValues.readObject("{\"a\":1} x")).isInstanceOf(IOException.class);
    }

    @Test
    void prettyOutputIndentsAsJacksonsDefaultPrinter() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("shed", 1);
        m.put("docs", List.of("a"));
        assertThat(new String(JsonValues.write(m, true), StandardCharsets.UTF_8))
                .isEqualTo("{\n  \"shed\" : 1,\n  \"docs\" : [ \"a\" ]\n}");
    }
}
