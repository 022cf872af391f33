package ingest

import (
	"strings"
	"testing"
)

func TestDetectKindReadsRussianAndMixedPages(t *testing.T) {
	cases := []struct {
		name string
		path []string
		text string
		want Kind
	}{
		{"Russian UI page", []string{"Экран приложения", "Вкладка «Синхронизация»"},
			"Откройте вкладку **Синхронизация** и заполните поле **Ревизия**. В выпадающем списке выберите " +
				"кластер, отметьте флажок **Prune** и нажмите кнопку **Сохранить**.", KindScreen},
		{"Russian UI text under a plain heading", []string{"Откат релиза"},
			"Нажмите кнопку **History**, выберите ревизию в выпадающем списке и щёлкните **Rollback**; " +
				"в диалоговом окне подтвердите откат кнопкой **OK**.", KindScreen},
		{"mixed Russian and English", []string{"Argo CD UI"},
			"Нажмите кнопку Sync на вкладке Applications, затем выберите ревизию в выпадающем списке.", KindScreen},
		{"Russian concept page", []string{"Контроллеры", "Желаемое состояние"},
			"Контроллер следит за состоянием кластера через API-сервер. Желаемое состояние объекта задаёт " +
				"поле spec, фактическое контроллер записывает в поле status; на каждой итерации он сравнивает " +
				"их и создаёт или удаляет поды, пока они не совпадут. Так кластер приходит к желаемому " +
				"состоянию без участия человека, и сбой одного узла не требует ручных действий. Подробнее об " +
				"этом рассказано на странице об архитектуре.", KindProse},
		// Below the English rule's count of 4 cues, a page naming a field
		// three times is prose, however short.
		{"Russian prose naming fields", []string{"Объекты Kubernetes", "Спецификация"},
			"В поле spec вы описываете желаемое состояние, в поле status система записывает текущее; " +
				"каждое поле проверяется API-сервером по схеме ресурса.", KindProse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := detectKind(c.path, c.text); got != c.want {
				cues, words := countWords(c.text, screenCueWords)
				t.Errorf("%s, want %s (%d cues of %d words)", got, c.want, cues, words)
			}
		})
	}
}

// Russian nouns change their ending with case and number: each form of a
// UI word counts, in any letter case and with ё written е, and a word
// that only begins like one (полезно, форматирование) does not.
func TestScreenWordsMatchRussianInflections(t *testing.T) {
	for _, forms := range []string{
		"поле поля полю полем полей полях",
		"кнопка кнопки кнопке кнопку кнопкой кнопок кнопками",
		"вкладка вкладки вкладке вкладку вкладкой вкладок",
		"меню экран экрана экране флажок флажка флажком чекбокс переключатель переключателем",
		"выпадающий выпадающем выпадающего значок иконку страница странице сайдбаре веб-интерфейсе",
		"нажмите нажать щёлкните щелкните кликните выберите ПОЛЕ Кнопку",
	} {
		for _, w := range strings.Fields(forms) {
			if !IsScreenWord(w) {
				t.Errorf("%q is not a screen word", w)
			}
		}
	}
	for _, w := range strings.Fields("пол полезно полный половина форматирование экранированные кнопочный список окно панели интерфейс") {
		if IsScreenWord(w) {
			t.Errorf("%q is a screen word", w)
		}
	}
}

// English pages keep their rule: the same words count as before.
func TestScreenWordsKeepEnglish(t *testing.T) {
	for _, w := range strings.Fields("click clicking select tab button menu dropdown drop-down checkbox toggle field panel dialog sidebar toolbar page screen icon ui Button UI") {
		if !IsScreenWord(w) {
			t.Errorf("%q is not a screen word", w)
		}
	}
	for _, w := range strings.Fields("buttons fields tabs form window list") {
		if IsScreenWord(w) {
			t.Errorf("%q is a screen word", w)
		}
	}
}
