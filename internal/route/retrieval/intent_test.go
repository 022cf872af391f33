package retrieval

import "testing"

func TestClassifyIntent(t *testing.T) {
	cases := map[string]Intent{
		"Where do I click to roll back a release in the deploy console?": IntentScreen,
		"Where is the Sync button?":                                      IntentScreen,
		"Which tab shows the sync status and the health panel?":          IntentScreen,
		"How does the approval of an expense claim work?":                IntentConcept,
		"Why are releases immutable?":                                    IntentConcept,
		"Where is the data stored?":                                      IntentConcept, // asks where, names no UI
	}
	for question, want := range cases {
		if got := ClassifyIntent(question); got != want {
			t.Errorf("%q: %s, want %s", question, got, want)
		}
	}
}

// Russian questions, and Russian with English terms in it, follow the
// English rule: asking where a UI element is, or naming two, is a screen
// question, whatever case the Russian words are in.
func TestClassifyIntentInRussian(t *testing.T) {
	cases := map[string]Intent{
		"Какое поле на этой форме отвечает за цену?":              IntentScreen,
		"Which field on this form sets the price?":                IntentScreen, // its English translation
		"Где кнопка Sync в Argo CD UI?":                           IntentScreen,
		"На какой вкладке включается автосинхронизация?":          IntentScreen,
		"Куда нажать, чтобы откатить релиз?":                      IntentScreen,
		"Где в веб-интерфейсе посмотреть логи пода?":              IntentScreen,
		"В каком меню находится переключатель тёмной темы?":       IntentScreen,
		"Что нужно щёлкнуть, чтобы открыть настройки приложения?": IntentScreen,
		"Как считается цена в этом процессе?":                     IntentConcept,
		"Где хранятся данные etcd?":                               IntentConcept, // asks where, names no UI
		"Что означает поле spec.replicas в Deployment?":           IntentConcept, // one field, asks for no place
		"Почему под висит в ImagePullBackOff?":                    IntentConcept,
		"Какое значение по умолчанию у поля replicas?":            IntentConcept, // "which" asks for no UI element
	}
	for question, want := range cases {
		if got := ClassifyIntent(question); got != want {
			t.Errorf("%q: %s, want %s", question, got, want)
		}
	}
}

// A question and its Russian translation (questions of the eval's dev
// set) classify alike, right or wrong: the Russian rule is the English
// one, not a second one that drifts.
func TestClassifyIntentAlikeInEnglishAndRussian(t *testing.T) {
	pairs := [][2]string{
		{"A sync is stuck running forever. Which button in the web UI lets me cancel it?",
			"Синхронизация зависла. Какая кнопка в веб-интерфейсе её отменяет?"},
		{"Where in the UI do I switch on orphaned-resource monitoring for a project and then see the orphaned objects?",
			"Где в UI включить мониторинг orphaned-ресурсов для проекта и потом посмотреть эти объекты?"},
		{"In the web console, which button do I press to start creating a new application, and what do I put in the Destination fields for the local cluster?",
			"Какую кнопку нажать в веб-консоли, чтобы начать создание приложения, и что указать в полях Destination для локального кластера?"},
		{"My ApplicationSet has a templated project field and reads from a private repo. When adding that repo in the UI, what should I pick in the project dropdown?",
			"У ApplicationSet шаблонное поле project и приватный репозиторий. Что выбрать в выпадающем списке проекта при добавлении репозитория в UI?"},
		{"Is there a single page in the UI where I can search resources across all my applications? Why don't I see Pods there?",
			"Есть ли в UI одна страница, где можно искать ресурсы по всем приложениям? Почему там не видно подов?"},
		{"The sync window indicator in the app view is orange. What does that color mean?",
			"Индикатор sync window в карточке приложения оранжевый. Что означает этот цвет?"},
		{"Where in Microsoft Teams do I get the webhook URL that Argo CD's teams-workflows notifications need?",
			"Где в Microsoft Teams взять webhook URL для уведомлений teams-workflows?"},
		{"Which field of an Application sets the target cluster?", "Какое поле Application задаёт целевой кластер?"},
		{"Where does Argo CD keep the admin password?", "Где Argo CD хранит пароль администратора?"},
		{"How do sync waves order the resources they apply?", "В каком порядке sync wave применяет ресурсы?"},
	}
	for _, p := range pairs {
		if en, ru := ClassifyIntent(p[0]), ClassifyIntent(p[1]); en != ru {
			t.Errorf("%q: %s, but %q: %s", p[0], en, p[1], ru)
		}
	}
}
