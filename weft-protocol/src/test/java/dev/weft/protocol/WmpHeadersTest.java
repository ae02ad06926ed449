package dev.weft.protocol;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class WmpHeadersTest {

    private static WmpHeaders list(String... pairs) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < pairs.length; i += 2) {
            h.add(pairs[i], pairs[i + 1]);
        }
        return h;
    }

    @Test
    void setReplacesTheFirstFieldWhereItStandsAndDropsTheLaterOnes() {
        WmpHeaders h = list("a", "1", "b", "2", "a", "3", "c", "4", "a", "5");
        h.set("a", "x");
        assertThat(h).isEqualTo(list("a", "x", "b", "2", "c", "4"));
    }

    @Test
    void setAppendsAFieldThatIsAbsent() {
        assertThat(list("a", "1").set("b", "2")).isEqualTo(list("a", "1", "b", "2"));
    }

    @Test
    void removeDropsEveryValueAndKeepsTheOrderOfTheRest() {
        WmpHeaders h = list("a", "1", "b", "2", "a", "3", "c", "4");
        h.remove("a").remove("absent");
        assertThat(h).isEqualTo(list("b", "2", "c", "4"));
        assertThat(h.contains("a")).isFalse();
        assertThat(h.contains("c")).isTrue();
        assertThat(h.get("c")).isEqualTo("4");
    }

    @Test
    void aListEmptiedByRemoveTakesNewFieldsAgain() {
        WmpHeaders h = list("a", "1", "a", "2");
        h.remove("a").add("b", "3").set("c", "4");
        assertThat(h).isEqualTo(list("b", "3", "c", "4"));
        assertThat(h.size()).isEqualTo(2);
    }
}
