"""Deterministic generator of the embedded text corpora ``builtin:sentiment-mini(-multi)``.

Sentences come from templates over small lexicons, with negation, contrast ("X, but Y": the second
clause decides), neither/nor, recommendation and emotion-cause constructions, plus 4 % label noise, so a
tiny model learns most of it but cannot reach 100 %. Generation uses ``random.Random(seed)`` (stable
across Python versions), so the corpus is identical on every machine; the build ships it
(``resources/sentiment_corpora.json.xz``), so the package does not generate anything at run time.
"""

from __future__ import annotations

import random

SUBJECTS = (
    "the movie", "this film", "the plot", "the acting", "the soundtrack", "the script", "the ending",
    "the cast", "the cinematography", "the dialogue", "the sequel", "the documentary", "the pacing",
    "this restaurant", "the service", "the food", "the dessert", "the waiter", "the menu", "the hotel",
    "the room", "the staff", "the breakfast", "this phone", "the battery", "the screen", "the camera",
    "the keyboard", "this book", "the story", "the main character", "the last chapter", "the album",
    "the concert", "the show", "the game", "the tour", "the museum", "the class", "the teacher",
)
POSITIVE = (
    "good", "great", "excellent", "wonderful", "superb", "delightful", "charming", "brilliant",
    "moving", "enjoyable", "fantastic", "lovely", "impressive", "memorable", "engaging", "gripping",
    "hilarious", "heartfelt", "stunning", "beautiful", "clever", "fresh", "solid", "pleasant",
    "satisfying", "outstanding", "remarkable", "touching", "witty", "inspiring", "polished", "fun",
)
NEGATIVE = (
    "bad", "terrible", "awful", "boring", "dull", "disappointing", "poor", "weak", "mediocre",
    "tedious", "bland", "clumsy", "forgettable", "painful", "predictable", "shallow", "messy",
    "annoying", "horrible", "lifeless", "sloppy", "unbearable", "overlong", "pointless", "stale",
    "cheap", "confusing", "lazy", "flat", "dreadful", "awkward", "noisy",
)
POS_VERBS = ("loved", "enjoyed", "adored", "liked", "admired", "appreciated", "treasured")
NEG_VERBS = ("hated", "disliked", "regretted", "despised", "endured", "resented", "loathed")
INTENSIFIERS = ("", "", "very ", "really ", "truly ", "incredibly ", "quite ", "rather ", "pretty ",
                "extremely ", "surprisingly ", "somewhat ")
OPENERS = ("", "", "", "honestly, ", "to be fair, ", "overall, ", "in the end, ", "frankly, ",
           "i think ", "my friends said ", "all in all, ")

EMOTIONS = ("joy", "sadness", "anger", "fear")
EMOTION_WORDS = {
    "joy": ("happy", "thrilled", "delighted", "glad", "overjoyed", "cheerful", "ecstatic", "pleased",
            "elated", "grateful", "excited", "proud"),
    "sadness": ("sad", "heartbroken", "miserable", "lonely", "gloomy", "depressed", "devastated",
                "down", "hopeless", "grieving", "crushed", "unhappy"),
    "anger": ("angry", "furious", "irritated", "annoyed", "outraged", "livid", "enraged", "resentful",
              "bitter", "fuming", "mad", "frustrated"),
    "fear": ("scared", "terrified", "anxious", "nervous", "afraid", "worried", "frightened",
             "panicked", "uneasy", "alarmed", "tense", "shaken"),
}
EMOTION_EVENTS = {
    "joy": ("i got the job", "we won the final", "my sister had a baby", "i passed the exam",
            "an old friend surprised me with a visit", "the sun finally came out", "i got a raise",
            "my garden bloomed", "we booked the trip", "the kids made me breakfast"),
    "sadness": ("my dog died", "we said goodbye at the station", "my best friend moved away",
                "i lost my grandmother's ring", "nobody came to the party", "the shop i grew up with closed",
                "i failed the interview", "my team was relegated", "the letter never came",
                "we sold the family house"),
    "anger": ("someone scratched my car", "they cancelled without telling me", "my landlord kept the deposit",
              "the referee ignored the foul", "my neighbour blasted music all night",
              "the company charged me twice", "he took credit for my work", "the train was late again",
              "they lied to my face", "someone cut in line"),
    "fear": ("i heard footsteps behind me in the dark", "the plane shook during the storm",
             "the doctor called me back", "the lights went out in the basement", "a dog chased me home",
             "the exam results are out tomorrow", "the bridge started swaying",
             "i got lost in the forest", "a stranger followed my car", "the smoke alarm went off at night"),
}


def _sentiment_sentence(rng: random.Random) -> tuple[str, int]:
    pos, neg = POSITIVE, NEGATIVE
    kind = rng.choices(range(8), weights=(30, 10, 14, 8, 14, 10, 8, 6))[0]
    subj, subj2 = rng.choice(SUBJECTS), rng.choice(SUBJECTS)
    label = rng.randrange(2)
    lex, other = (pos, neg) if label else (neg, pos)
    opener, inten = rng.choice(OPENERS), rng.choice(INTENSIFIERS)
    if kind == 0:
        s = f"{opener}{subj} was {inten}{rng.choice(lex)}."
    elif kind == 1:  # negation flips the adjective
        s = f"{opener}{subj} was not {inten}{rng.choice(other)}."
    elif kind == 2:  # contrast: the second clause decides
        s = f"{subj} was {rng.choice(other)}, but {subj2} was {inten}{rng.choice(lex)}."
    elif kind == 3:
        s = f"although {subj} was {rng.choice(other)}, {subj2} was {rng.choice(lex)}."
    elif kind == 4:
        verb = rng.choice(POS_VERBS if label else NEG_VERBS)
        s = f"{opener}i {verb} {subj}."
    elif kind == 5:
        s = f"{subj} was {rng.choice(lex)} and {inten}{rng.choice(lex)}."
    elif kind == 6:
        rec = "would recommend" if label else "would not recommend"
        s = f"{opener}i {rec} {subj} to anyone, it was {rng.choice(lex)}."
    else:  # neither/nor of the opposite polarity
        a, b = rng.sample(other, 2)
        s = f"{subj} was neither {a} nor {b}."
    return s, label


def _emotion_sentence(rng: random.Random) -> tuple[str, int]:
    label = rng.randrange(len(EMOTIONS))
    emo = EMOTIONS[label]
    word, event = rng.choice(EMOTION_WORDS[emo]), rng.choice(EMOTION_EVENTS[emo])
    inten = rng.choice(INTENSIFIERS)
    kind = rng.randrange(6)
    if kind == 0:
        s = f"i feel {inten}{word} because {event}."
    elif kind == 1:
        s = f"{event} and now i am {inten}{word}."
    elif kind == 2:
        s = f"i was {word} when {event}."
    elif kind == 3:  # the stated feeling decides over another emotion's event
        other = rng.choice([e for e in EMOTIONS if e != emo])
        s = f"{rng.choice(EMOTION_EVENTS[other])}, but honestly i am {word}."
    elif kind == 4:
        s = f"{event}."
    else:
        s = f"{inten}{word} today, {event}."
    return s, label


def generate(kind: str, n: int, *, seed: int = 0, noise: float = 0.04) -> tuple[list[str], list[int]]:
    """Generate ``n`` unique labelled sentences; ``kind`` is "sentiment" (2 classes) or "emotion" (4)."""
    if kind not in ("sentiment", "emotion"):
        raise ValueError(f"kind must be 'sentiment' or 'emotion', got {kind!r}")
    make, n_classes = (_sentiment_sentence, 2) if kind == "sentiment" else (_emotion_sentence, 4)
    rng = random.Random(f"robustsuite-{kind}-{seed}")
    seen: set[str] = set()
    texts: list[str] = []
    labels: list[int] = []
    for _ in range(50 * n):
        if len(texts) == n:
            break
        s, y = make(rng)
        if s in seen:
            continue
        seen.add(s)
        if rng.random() < noise:  # label noise keeps the task below 100 %
            y = rng.choice([c for c in range(n_classes) if c != y])
        texts.append(s)
        labels.append(y)
    if len(texts) < n:  # pragma: no cover - lexicons are far larger than n
        raise RuntimeError(f"could only generate {len(texts)} unique {kind} sentences")
    return texts, labels
