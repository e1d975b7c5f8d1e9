"""Seeded probabilistic grammar of everyday English for the synthetic mini corpus.

The sentences are the English side of a synthetic speech-translation corpus: they are
translated by apertium (``eng-spa``) and spoken by espeak-ng, so the grammar only emits plain
lower-case ASCII words that apertium knows (plus a capital first letter, ``I``, commas and a
final ``.`` or ``?``): no digits, contractions, hyphens, quotes or proper names.  Every word of
``VOCABULARY`` (lower-cased, so ``I`` is listed as ``i``) is in apertium's English dictionary;
words whose Spanish apertium fails to generate (farm, station, manager, ...) are left out.

The grammar is a hand-written PCFG whose rules live in the module-level tables below.
Informally, with ``[...]`` optional and ``|`` a weighted choice::

    Sentence     -> [Marker ","] Declarative [Vocative] "."
                  | [QMarker ","] (YesNoQuestion | WhQuestion) [Vocative] "?"
    Declarative  -> Clause | Clause Sub | Sub "," Clause | Time "," Clause
                  | Clause "and" Clause | Clause "," "but" Clause | NP VP ("and" | "but") VP
    Marker       -> well | yes | no | of course | however | in fact | then | finally | ...
    QMarker      -> well | now | then | oh | actually
    Vocative     -> "," my (friend | friends)
    YesNoQuestion-> Operator NP VP' [Sub]             (do-support or auxiliary inversion)
    WhQuestion   -> Wh Operator NP VP'-with-gap [Sub] | "who" VP | "what" VP
    Wh           -> what | who | which Noun | where | when | why | how [Adj]
    Sub          -> (because | when | although | if | before | after | while) Clause
    Clause       -> NP VP | "there" Be NP Location | "it" Weather | NP Be Predicate
    Predicate    -> [very] Adj | Adj "and" Adj | Adj "," Adj "and" Adj | Location | NP
    VP           -> Aux* [not] [Adverb] Verb Complements [Manner] [Location] [With] [Time]
    Complements  -> NP | Prep NP | NP NP | NP "to" NP | "to" NP | "that" Clause | "to" VP | ...
    NP           -> Det [very] Adj [Adj] Noun [PP] [Relative] | Pronoun | NP "and" NP
                  | DefDet [very] Adj [Adj] Noun "," NonRestrictive ","
                  | Item "," Item ["," Item] "and" (Item | "I")       (a list: plural)
    Item         -> Det [very] Adj [Adj] Noun
    Relative     -> (who | which | that) VP | (who | which | that) NP VP-with-gap
    NonRestrictive -> (who | which) VP | (who | which) NP VP-with-gap

A non-restrictive relative clause follows only a noun with a definite or possessive determiner
(the, this, my, our, ...) and takes "who" for people and "which" for the rest, never "that"; its
closing comma is dropped where the sentence ends or another comma follows.  Lists of three or
four noun phrases (no serial comma) are subjects or objects; discourse markers open statements
(and a few questions); each one was checked to come through apertium eng-spa and es-pt whole,
comma included.

A verb comes with a *frame* (intransitive, transitive, prepositional, ditransitive, motion,
that-clause, infinitive) that fixes its complements and, through semantic tags, which nouns can
be its subject and objects: people read books, animals eat food, nobody drives a sandwich.
Nouns, adjectives and locations carry tags too; a noun phrase is drawn among the nouns sharing a
tag with what its slot asks for.

A sentence first picks a time (past, present, future) and from it the tenses of its clauses
(present and past simple, ``will`` future, present and past progressive, present perfect), with
the usual sequence of tenses in subordinate clauses (``if`` + present for the future, ``while`` +
progressive, and so on).  Agreement, irregular forms, ``a``/``an``, do-support and auxiliary
inversion are realised when a clause is turned into words; wh-questions replace a slot of the
clause (object, location, time, manner, stranded preposition, ...) by its wh-word.

Sentence length is controlled by depth-dependent probabilities of optional material (adjectives,
prepositional phrases, relative clauses, lists, adjuncts, subordinate and coordinated clauses,
discourse markers); the rare sentence outside ``MIN_WORDS``..``MAX_WORDS`` is drawn again.  The
comma rules are weighted so that about 40 % of the sentences have a comma inside, which makes
them more like the punctuated talks of MuST-C.  All choices go through one ``random.Random``
over tuples, so a seed fixes the output in every process.
"""

from __future__ import annotations

import random
from bisect import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Generic, TypeVar

__all__ = ["MAX_WORDS", "MIN_WORDS", "VOCABULARY", "Grammar", "generate"]

MIN_WORDS = 4
MAX_WORDS = 36

T = TypeVar("T")

# --------------------------------------------------------------------------------------------
# Lexicon.  Noun rows are (singular, plural or "" for the regular plural, tags).
# --------------------------------------------------------------------------------------------

COUNT_NOUNS: tuple[tuple[str, str, str], ...] = (
    ("man", "men", "person adult"),
    ("woman", "women", "person adult"),
    ("boy", "", "person young"),
    ("girl", "", "person young"),
    ("child", "children", "person young"),
    ("baby", "", "person young"),
    ("teacher", "", "person adult job"),
    ("student", "", "person young"),
    ("doctor", "", "person adult job"),
    ("nurse", "", "person adult job"),
    ("farmer", "", "person adult job"),
    ("worker", "", "person adult"),
    ("neighbour", "", "person adult"),
    ("friend", "", "person"),
    ("mother", "", "person adult"),
    ("father", "", "person adult"),
    ("sister", "", "person"),
    ("brother", "", "person"),
    ("son", "", "person"),
    ("daughter", "", "person"),
    ("uncle", "", "person adult"),
    ("aunt", "", "person adult"),
    ("grandmother", "", "person adult"),
    ("grandfather", "", "person adult"),
    ("cousin", "", "person"),
    ("wife", "wives", "person adult"),
    ("husband", "", "person adult"),
    ("cook", "", "person adult job"),
    ("writer", "", "person adult job"),
    ("singer", "", "person adult job"),
    ("player", "", "person"),
    ("artist", "", "person adult job"),
    ("scientist", "", "person adult job"),
    ("engineer", "", "person adult job"),
    ("pilot", "", "person adult job"),
    ("waiter", "", "person adult job"),
    ("actor", "", "person adult job"),
    ("tourist", "", "person adult"),
    ("visitor", "", "person"),
    ("king", "", "person adult"),
    ("queen", "", "person adult"),
    ("soldier", "", "person adult job"),
    ("guest", "", "person"),
    ("baker", "", "person adult job"),
    ("fisherman", "fishermen", "person adult job"),
    ("policeman", "policemen", "person adult job"),
    ("lady", "", "person adult"),
    ("owner", "", "person adult"),
    ("customer", "", "person adult"),
    ("musician", "", "person adult job"),
    ("dancer", "", "person job"),
    ("painter", "", "person adult job"),
    ("pupil", "", "person young"),
    ("stranger", "", "person adult"),
    ("thief", "thieves", "person adult"),
    ("passenger", "", "person adult"),
    ("dog", "", "animal pet swimmer"),
    ("cat", "", "animal pet"),
    ("horse", "", "animal farm rideable"),
    ("bird", "", "animal pet flyer"),
    ("cow", "", "animal farm"),
    ("sheep", "sheep", "animal farm"),
    ("fish", "fish", "animal pet swimmer catchable"),
    ("mouse", "mice", "animal catchable"),
    ("rabbit", "", "animal pet catchable"),
    ("lion", "", "animal wild"),
    ("tiger", "", "animal wild"),
    ("elephant", "", "animal wild rideable"),
    ("monkey", "", "animal wild"),
    ("duck", "", "animal farm swimmer flyer"),
    ("chicken", "", "animal farm"),
    ("pig", "", "animal farm"),
    ("bear", "", "animal wild"),
    ("wolf", "wolves", "animal wild"),
    ("fox", "", "animal wild"),
    ("snake", "", "animal wild"),
    ("frog", "", "animal swimmer catchable"),
    ("goat", "", "animal farm"),
    ("donkey", "", "animal farm rideable"),
    ("owl", "", "animal flyer"),
    ("bee", "", "animal flyer"),
    ("spider", "", "animal"),
    ("camel", "", "animal rideable"),
    ("goose", "geese", "animal farm swimmer flyer"),
    ("parrot", "", "animal pet flyer"),
    ("kitten", "", "animal pet"),
    ("butterfly", "", "animal flyer catchable"),
    ("turtle", "", "animal pet swimmer"),
    ("house", "", "place building loc_in goal visitable cleanable paintable buildable dwelling"),
    ("school", "", "place building loc_at goal workplace buildable landmark"),
    ("city", "", "place settlement loc_in goal visitable dwelling"),
    ("village", "", "place settlement loc_in goal visitable dwelling"),
    ("town", "", "place settlement loc_in goal visitable dwelling"),
    ("country", "", "place settlement loc_in visitable dwelling"),
    ("park", "", "place outdoor loc_in goal visitable across landmark"),
    ("garden", "", "place outdoor loc_in goal cleanable"),
    ("kitchen", "", "place room loc_in goal cleanable paintable"),
    ("room", "", "place room loc_in goal cleanable paintable"),
    ("bedroom", "", "place room loc_in goal cleanable paintable"),
    ("classroom", "", "place room loc_in goal cleanable paintable"),
    ("office", "", "place room loc_in loc_at goal workplace cleanable"),
    ("shop", "", "place building shop loc_in loc_at goal workplace"),
    ("market", "", "place shop loc_at goal workplace visitable landmark"),
    ("supermarket", "", "place building shop loc_at goal workplace"),
    ("bakery", "", "place building shop loc_at goal workplace"),
    ("hospital", "", "place building loc_in loc_at goal workplace visitable buildable"),
    ("library", "", "place building loc_in loc_at goal workplace visitable"),
    ("restaurant", "", "place building loc_in loc_at goal workplace"),
    ("church", "", "place building loc_in loc_at goal visitable paintable landmark"),
    ("hotel", "", "place building loc_in loc_at goal workplace"),
    ("museum", "", "place building loc_in loc_at goal workplace visitable landmark"),
    ("cinema", "", "place building loc_at goal"),
    ("bank", "", "place building loc_at goal workplace"),
    ("factory", "", "place building loc_in loc_at goal workplace buildable"),
    ("airport", "", "place building loc_at goal workplace"),
    ("castle", "", "place building loc_in goal visitable buildable landmark"),
    ("zoo", "", "place outdoor loc_at goal visitable"),
    ("beach", "", "place outdoor loc_on goal landmark"),
    ("forest", "", "place outdoor loc_in goal dwelling landmark"),
    ("river", "", "place outdoor water loc_in across landmark"),
    ("lake", "", "place outdoor water loc_in goal landmark"),
    ("sea", "", "place outdoor water loc_in goal"),
    ("mountain", "", "place outdoor loc_on goal landmark"),
    ("hill", "", "place outdoor loc_on goal"),
    ("island", "", "place outdoor loc_on goal visitable"),
    ("field", "", "place outdoor loc_in across"),
    ("street", "", "place outdoor loc_in across"),
    ("road", "", "place outdoor loc_on across"),
    ("bridge", "", "place outdoor loc_on across buildable landmark under"),
    ("square", "", "place outdoor loc_in across"),
    ("playground", "", "place outdoor loc_in goal"),
    ("book", "", "thing portable readable openable"),
    ("letter", "", "thing portable readable writable sendable"),
    ("newspaper", "", "thing portable readable"),
    ("magazine", "", "thing portable readable"),
    ("car", "", "thing vehicle ownable drivable fixable washable"),
    ("bus", "", "thing vehicle drivable catchable"),
    ("train", "", "thing vehicle catchable"),
    ("bicycle", "", "thing vehicle ownable rideable fixable paintable"),
    ("boat", "", "thing vehicle ownable buildable paintable"),
    ("ship", "", "thing vehicle buildable"),
    ("plane", "", "thing vehicle"),
    ("truck", "", "thing vehicle ownable drivable fixable washable"),
    ("taxi", "", "thing vehicle drivable catchable"),
    ("table", "", "thing furniture surface under fixable paintable cleanable"),
    ("chair", "", "thing furniture surface under fixable paintable breakable"),
    ("desk", "", "thing furniture surface under cleanable"),
    ("bed", "", "thing furniture surface under"),
    ("sofa", "", "thing furniture surface"),
    ("shelf", "shelves", "thing furniture surface"),
    ("door", "", "thing openable fixable paintable"),
    ("window", "", "thing openable breakable cleanable"),
    ("floor", "", "thing surface cleanable"),
    ("roof", "", "thing surface fixable"),
    ("bag", "", "thing portable container openable"),
    ("box", "", "thing portable container openable"),
    ("basket", "", "thing portable container"),
    ("key", "", "thing portable"),
    ("phone", "", "thing portable breakable fixable answerable"),
    ("computer", "", "thing portable fixable"),
    ("picture", "", "thing portable drawable"),
    ("map", "", "thing portable drawable readable"),
    ("ball", "", "thing portable throwable catchable toy"),
    ("hat", "", "thing portable clothes wearable washable"),
    ("shirt", "", "thing portable clothes wearable washable"),
    ("shoe", "", "thing portable clothes wearable"),
    ("coat", "", "thing portable clothes wearable washable"),
    ("dress", "", "thing portable clothes wearable washable"),
    ("jacket", "", "thing portable clothes wearable washable"),
    ("cup", "", "thing portable container breakable washable"),
    ("plate", "", "thing portable breakable washable"),
    ("bottle", "", "thing portable container breakable openable"),
    ("glass", "", "thing portable breakable washable"),
    ("pen", "", "thing portable"),
    ("pencil", "", "thing portable"),
    ("ticket", "", "thing portable"),
    ("present", "", "thing portable gift"),
    ("gift", "", "thing portable gift"),
    ("clock", "", "thing breakable fixable"),
    ("watch", "", "thing portable breakable fixable wearable"),
    ("camera", "", "thing portable breakable fixable"),
    ("lamp", "", "thing breakable fixable"),
    ("umbrella", "", "thing portable"),
    ("knife", "knives", "thing portable"),
    ("spoon", "", "thing portable washable"),
    ("toy", "", "thing portable breakable toy"),
    ("guitar", "", "thing portable"),
    ("radio", "", "thing portable fixable"),
    ("flower", "", "thing portable drawable plantable"),
    ("tree", "", "thing under drawable plantable"),
    ("stone", "", "thing portable throwable"),
    ("mirror", "", "thing breakable"),
    ("wallet", "", "thing portable"),
    ("ring", "", "thing portable wearable"),
    ("blanket", "", "thing portable washable"),
    ("card", "", "thing portable writable sendable"),
    ("apple", "", "food"),
    ("orange", "", "food"),
    ("egg", "", "food breakable"),
    ("cake", "", "food"),
    ("sandwich", "", "food"),
    ("banana", "", "food"),
    ("potato", "potatoes", "food"),
    ("tomato", "tomatoes", "food"),
    ("carrot", "", "food"),
    ("pie", "", "food"),
    ("biscuit", "", "food"),
    ("lemon", "", "food"),
    ("onion", "", "food"),
    ("sausage", "", "food"),
    ("meal", "", "food"),
    ("pizza", "", "food"),
    ("story", "", "text readable writable tellable"),
    ("poem", "", "text readable writable"),
    ("song", "", "text writable sound singable"),
    ("report", "", "text readable writable"),
    ("message", "", "text readable writable sendable answerable"),
    ("note", "", "text readable writable"),
    ("list", "", "text readable writable"),
    ("email", "", "text readable writable sendable answerable"),
    ("joke", "", "text tellable"),
    ("question", "", "idea askable answerable"),
    ("answer", "", "idea"),
    ("idea", "", "idea"),
    ("problem", "", "idea solvable"),
    ("plan", "", "idea"),
    ("secret", "", "idea tellable"),
    ("lesson", "", "event learnable"),
    ("game", "", "event playable watchable winnable"),
    ("match", "", "event playable watchable winnable"),
    ("film", "", "event watchable"),
    ("party", "", "event"),
    ("concert", "", "event"),
    ("meeting", "", "event"),
    ("trip", "", "event"),
    ("race", "", "event watchable winnable"),
    ("show", "", "event watchable"),
    ("noise", "", "sound"),
)

MASS_NOUNS: tuple[tuple[str, str], ...] = (
    ("bread", "food"),
    ("rice", "food"),
    ("cheese", "food"),
    ("meat", "food"),
    ("soup", "food"),
    ("chocolate", "food"),
    ("butter", "food"),
    ("sugar", "food"),
    ("honey", "food"),
    ("fruit", "food"),
    ("salad", "food"),
    ("water", "drink"),
    ("milk", "drink"),
    ("coffee", "drink"),
    ("tea", "drink"),
    ("juice", "drink"),
    ("lemonade", "drink"),
    ("money", "money"),
    ("music", "sound"),
)

# (word, rank for ordering: quality < size < age < colour, tags it can modify, gradable)
ADJECTIVES: tuple[tuple[str, int, str, bool], ...] = (
    ("good", 0, "person animal thing food drink text event idea place", True),
    ("bad", 0, "person animal thing food drink text event idea place", True),
    ("beautiful", 0, "person animal thing place event", True),
    ("lovely", 0, "animal thing place event", True),
    ("nice", 0, "person animal thing food drink place event", True),
    ("wonderful", 0, "person place event text idea", False),
    ("terrible", 0, "food drink event idea text place", False),
    ("strange", 0, "person animal thing place idea text event", True),
    ("famous", 0, "person place text", True),
    ("important", 0, "person text event idea", True),
    ("interesting", 0, "person text event idea place", True),
    ("funny", 0, "person animal text event idea", True),
    ("boring", 0, "person text event place", True),
    ("delicious", 0, "food drink", False),
    ("friendly", 0, "person animal", True),
    ("kind", 0, "person", True),
    ("clever", 0, "person animal", True),
    ("lazy", 0, "person animal", True),
    ("brave", 0, "person", True),
    ("polite", 0, "person", True),
    ("busy", 0, "person settlement shop", True),
    ("quiet", 0, "person animal place", True),
    ("noisy", 0, "person animal place", True),
    ("dangerous", 0, "animal place idea", True),
    ("expensive", 0, "thing food drink", True),
    ("cheap", 0, "thing food drink", True),
    ("fresh", 0, "food drink", True),
    ("sweet", 0, "food drink", True),
    ("simple", 0, "idea text", True),
    ("difficult", 0, "idea text event", True),
    ("easy", 0, "idea text event", True),
    ("useful", 0, "thing idea text", True),
    ("careful", 0, "person", True),
    ("happy", 0, "person animal", True),
    ("sad", 0, "person animal text event", True),
    ("tired", 0, "person animal", True),
    ("hungry", 0, "person animal", True),
    ("angry", 0, "person animal", True),
    ("rich", 0, "person", True),
    ("poor", 0, "person place", True),
    ("hot", 0, "food drink", True),
    ("cold", 0, "food drink place", True),
    ("warm", 0, "food drink place clothes", True),
    ("dark", 0, "place", True),
    ("clean", 0, "thing place clothes", True),
    ("dirty", 0, "thing place clothes", True),
    ("empty", 0, "container room building", False),
    ("full", 0, "container", False),
    ("broken", 0, "breakable fixable", False),
    ("wet", 0, "clothes animal", True),
    ("strong", 0, "person animal drink", True),
    ("weak", 0, "person animal", True),
    ("sick", 0, "person animal", True),
    ("soft", 0, "furniture clothes", True),
    ("loud", 0, "sound", True),
    ("safe", 0, "place", True),
    ("comfortable", 0, "furniture clothes room", True),
    ("big", 1, "animal thing place food", True),
    ("small", 1, "person animal thing place food", True),
    ("little", 1, "person animal thing place", False),
    ("large", 1, "animal thing place", True),
    ("huge", 1, "animal thing place", False),
    ("tiny", 1, "animal thing", False),
    ("tall", 1, "person building", True),
    ("short", 1, "person text event", True),
    ("long", 1, "text event", True),
    ("heavy", 1, "portable furniture", True),
    ("fat", 1, "animal", True),
    ("thin", 1, "person animal", True),
    ("old", 2, "person animal thing place text", True),
    ("new", 2, "thing place text idea", True),
    ("young", 2, "person animal", True),
    ("modern", 2, "building thing", True),
    ("red", 3, "thing", False),
    ("blue", 3, "thing", False),
    ("green", 3, "thing", False),
    ("yellow", 3, "thing", False),
    ("black", 3, "thing animal", False),
    ("white", 3, "thing animal", False),
    ("brown", 3, "thing animal", False),
    ("grey", 3, "thing animal", False),
    ("pink", 3, "thing", False),
    ("orange", 3, "thing", False),
    ("purple", 3, "thing", False),
)

WEATHER_ADJECTIVES: tuple[str, ...] = ("cold", "hot", "warm", "sunny", "windy", "dark", "late")
WEATHER_VERBS: tuple[str, ...] = ("rain",)

# (base, past, past participle) of the irregular verbs; regular forms are derived by rule.
IRREGULAR_VERBS: tuple[tuple[str, str, str], ...] = (
    ("go", "went", "gone"),
    ("come", "came", "come"),
    ("see", "saw", "seen"),
    ("eat", "ate", "eaten"),
    ("drink", "drank", "drunk"),
    ("take", "took", "taken"),
    ("give", "gave", "given"),
    ("buy", "bought", "bought"),
    ("bring", "brought", "brought"),
    ("think", "thought", "thought"),
    ("catch", "caught", "caught"),
    ("find", "found", "found"),
    ("make", "made", "made"),
    ("sell", "sold", "sold"),
    ("tell", "told", "told"),
    ("build", "built", "built"),
    ("send", "sent", "sent"),
    ("lend", "lent", "lent"),
    ("write", "wrote", "written"),
    ("read", "read", "read"),
    ("ride", "rode", "ridden"),
    ("drive", "drove", "driven"),
    ("fly", "flew", "flown"),
    ("swim", "swam", "swum"),
    ("run", "ran", "run"),
    ("sing", "sang", "sung"),
    ("begin", "began", "begun"),
    ("sit", "sat", "sat"),
    ("stand", "stood", "stood"),
    ("understand", "understood", "understood"),
    ("hold", "held", "held"),
    ("keep", "kept", "kept"),
    ("sleep", "slept", "slept"),
    ("leave", "left", "left"),
    ("meet", "met", "met"),
    ("lose", "lost", "lost"),
    ("pay", "paid", "paid"),
    ("say", "said", "said"),
    ("hear", "heard", "heard"),
    ("know", "knew", "known"),
    ("grow", "grew", "grown"),
    ("throw", "threw", "thrown"),
    ("draw", "drew", "drawn"),
    ("show", "showed", "shown"),
    ("fall", "fell", "fallen"),
    ("forget", "forgot", "forgotten"),
    ("break", "broke", "broken"),
    ("choose", "chose", "chosen"),
    ("speak", "spoke", "spoken"),
    ("steal", "stole", "stolen"),
    ("wear", "wore", "worn"),
    ("win", "won", "won"),
    ("bite", "bit", "bitten"),
    ("hide", "hid", "hidden"),
    ("wake", "woke", "woken"),
    ("cut", "cut", "cut"),
    ("feed", "fed", "fed"),
    ("have", "had", "had"),
)

# Verbs whose final consonant doubles before -ed and -ing.
DOUBLING_VERBS: tuple[str, ...] = (
    "begin", "cut", "drop", "forget", "plan", "prefer", "run", "shop", "sit", "stop", "swim",
    "win",
)

# Verbs that do not take the progressive or manner adverbs in their transitive or clausal use.
STATIVE_VERBS: tuple[str, ...] = (
    "belong", "believe", "forget", "hate", "have", "hear", "hope", "know", "like", "love",
    "need", "prefer", "remember", "see", "think", "understand", "want",
)

# (verb, subject tags)
INTRANSITIVE: tuple[tuple[str, str], ...] = (
    ("sleep", "person animal"),
    ("run", "person animal"),
    ("walk", "person animal"),
    ("swim", "person swimmer"),
    ("jump", "person animal"),
    ("play", "person pet"),
    ("wait", "person animal"),
    ("eat", "person animal"),
    ("rest", "person animal"),
    ("sit", "person animal"),
    ("cry", "person"),
    ("smile", "person"),
    ("laugh", "person"),
    ("dance", "person"),
    ("sing", "person"),
    ("work", "person"),
    ("arrive", "person vehicle"),
    ("leave", "person vehicle"),
    ("stay", "person"),
    ("study", "person"),
    ("cook", "person"),
    ("read", "person"),
    ("write", "person"),
    ("shout", "person"),
    ("listen", "person animal"),
    ("talk", "person"),
    ("hide", "person animal"),
    ("fly", "flyer"),
    ("fall", "person animal portable food"),
    ("break", "breakable"),
    ("stop", "person vehicle"),
    ("wake", "person animal"),
    ("grow", "person animal plantable"),
    ("win", "person"),
    ("travel", "person"),
)

# (verb, subject tags): verbs of motion that take a goal ("to the park", "home", ...).
MOTION: tuple[tuple[str, str], ...] = (
    ("go", "person animal"),
    ("come", "person animal"),
    ("walk", "person animal"),
    ("run", "person animal"),
    ("drive", "person"),
    ("fly", "person flyer"),
    ("travel", "person"),
    ("return", "person"),
    ("swim", "person swimmer"),
    ("move", "person"),
)

# (verb, subject tags, object tags)
TRANSITIVE: tuple[tuple[str, str, str], ...] = (
    ("eat", "person animal", "food"),
    ("drink", "person animal", "drink"),
    ("cook", "person", "food"),
    ("make", "person", "food drink"),
    ("buy", "person", "portable food drink ownable"),
    ("sell", "person", "portable food drink ownable"),
    ("see", "person animal", "person animal thing place"),
    ("watch", "person animal", "person animal watchable"),
    ("read", "person", "readable"),
    ("write", "person", "writable"),
    ("find", "person animal", "portable person animal"),
    ("lose", "person", "portable"),
    ("carry", "person animal", "portable food"),
    ("open", "person", "openable gift"),
    ("close", "person", "openable"),
    ("clean", "person", "cleanable"),
    ("wash", "person", "washable"),
    ("paint", "person", "paintable"),
    ("fix", "person", "fixable"),
    ("repair", "person", "fixable"),
    ("build", "person", "buildable"),
    ("draw", "person", "drawable animal person"),
    ("help", "person animal", "person"),
    ("call", "person", "person"),
    ("meet", "person", "person"),
    ("visit", "person", "person visitable"),
    ("like", "person animal", "person animal food drink event text sound place portable"),
    ("love", "person animal", "person animal food drink event text sound place"),
    ("hate", "person animal", "person animal food drink event text sound"),
    ("want", "person animal", "portable food drink ownable"),
    ("need", "person animal", "portable food drink ownable"),
    ("bring", "person animal", "portable food drink"),
    ("take", "person", "portable food drink"),
    ("hear", "person animal", "person animal sound"),
    ("sing", "person", "singable"),
    ("play", "person", "playable"),
    ("win", "person", "winnable"),
    ("forget", "person", "portable idea text"),
    ("remember", "person animal", "person idea text event place"),
    ("understand", "person", "idea text learnable person"),
    ("answer", "person", "answerable"),
    ("ask", "person", "askable person"),
    ("catch", "person animal", "catchable"),
    ("drive", "person", "drivable"),
    ("ride", "person", "rideable"),
    ("throw", "person", "throwable"),
    ("hold", "person", "portable"),
    ("keep", "person", "portable pet"),
    ("break", "person animal", "breakable"),
    ("steal", "person", "portable money"),
    ("wear", "person", "wearable"),
    ("choose", "person", "portable food"),
    ("follow", "person animal", "person animal vehicle"),
    ("bite", "animal", "person animal"),
    ("chase", "person animal", "person animal throwable vehicle"),
    ("feed", "person", "animal"),
    ("push", "person animal", "vehicle furniture"),
    ("pull", "person animal", "vehicle furniture"),
    ("order", "person", "food drink"),
    ("plant", "person", "plantable"),
    ("kick", "person animal", "throwable"),
    ("finish", "person", "text food event"),
    ("start", "person", "event text"),
    ("enjoy", "person animal", "event food drink sound text"),
    ("miss", "person", "person vehicle event"),
    ("know", "person animal", "person place text idea"),
    ("have", "person", "portable ownable animal"),
    ("solve", "person", "solvable"),
    ("learn", "person", "learnable singable"),
    ("cut", "person", "food"),
    ("wake", "person animal", "person"),
    ("touch", "person animal", "person animal thing"),
    ("fill", "person", "container"),
    ("use", "person", "portable ownable"),
    ("borrow", "person", "portable ownable"),
    ("hide", "person animal", "portable food"),
    ("drop", "person animal", "portable food"),
    ("leave", "person", "building room settlement"),
    ("move", "person animal", "furniture"),
)

# (verb, preposition, subject tags, object tags): the object can be questioned or relativised,
# stranding the preposition ("Who did you wait for?").
PREPOSITIONAL: tuple[tuple[str, str, str, str], ...] = (
    ("listen", "to", "person animal", "person sound"),
    ("look", "at", "person animal", "person animal thing place"),
    ("wait", "for", "person animal", "person vehicle"),
    ("look", "for", "person animal", "portable person animal"),
    ("talk", "about", "person", "person animal event text idea place"),
    ("talk", "to", "person", "person"),
    ("think", "about", "person", "person animal event idea place"),
    ("laugh", "at", "person", "person animal text"),
    ("dream", "about", "person animal", "person animal place event food"),
    ("pay", "for", "person", "food drink portable"),
    ("play", "with", "person animal", "person animal toy"),
    ("belong", "to", "portable animal", "person"),
    ("sit", "on", "person animal", "furniture"),
    ("ask", "for", "person", "food drink portable person"),
    ("speak", "to", "person", "person"),
    ("write", "to", "person", "person"),
    ("shout", "at", "person", "person animal"),
    ("smile", "at", "person", "person animal"),
)

# (verb, preposition, subject tags, place tags): the place can be questioned with "where".
PLACE_VERBS: tuple[tuple[str, str, str, str], ...] = (
    ("live", "in", "person animal", "dwelling"),
    ("work", "at", "person", "workplace"),
    ("arrive", "at", "person vehicle", "building"),
    ("swim", "in", "person swimmer", "water"),
    ("stay", "at", "person", "building"),
)

# (verb, preposition of the recipient, subject tags, recipient tags, theme tags)
DITRANSITIVE: tuple[tuple[str, str, str, str, str], ...] = (
    ("give", "to", "person", "person animal", "portable food drink"),
    ("send", "to", "person", "person", "sendable gift"),
    ("show", "to", "person", "person", "portable"),
    ("tell", "to", "person", "person", "tellable"),
    ("bring", "to", "person", "person", "portable food drink"),
    ("buy", "for", "person", "person", "portable food"),
    ("read", "to", "person", "person", "readable"),
    ("sell", "to", "person", "person", "portable food"),
    ("lend", "to", "person", "person", "portable ownable"),
    ("throw", "to", "person", "person animal", "throwable"),
    ("pass", "to", "person", "person", "portable food"),
    ("offer", "to", "person", "person animal", "food drink portable"),
    ("cook", "for", "person", "person", "food"),
    ("make", "for", "person", "person", "food drink"),
    ("write", "to", "person", "person", "sendable"),
)

# (verb, subject tags, takes a recipient): verbs with a "that" clause.
THAT_VERBS: tuple[tuple[str, str, bool], ...] = (
    ("say", "person", False),
    ("think", "person", False),
    ("know", "person", False),
    ("hope", "person", False),
    ("believe", "person", False),
    ("hear", "person", False),
    ("explain", "person", False),
    ("promise", "person", False),
    ("dream", "person", False),
    ("tell", "person", True),
    ("promise", "person", True),
)

# (verb, subject tags): verbs with a "to" infinitive.
INFINITIVE_VERBS: tuple[tuple[str, str], ...] = (
    ("want", "person animal"),
    ("need", "person animal"),
    ("try", "person animal"),
    ("decide", "person"),
    ("plan", "person"),
    ("hope", "person"),
    ("like", "person animal"),
    ("love", "person"),
    ("forget", "person"),
    ("learn", "person"),
    ("begin", "person animal"),
    ("start", "person animal"),
    ("refuse", "person"),
    ("promise", "person"),
    ("prefer", "person"),
    ("remember", "person"),
)

# Verbs only used in "What happened ...?" questions.
EVENT_VERBS: tuple[str, ...] = ("happen",)

# --------------------------------------------------------------------------------------------
# Function words and phrase tables.
# --------------------------------------------------------------------------------------------

# (word, person, plural, weight)
SUBJECT_PRONOUNS: tuple[tuple[str, int, bool, float], ...] = (
    ("I", 1, False, 3.0),
    ("you", 2, False, 2.0),
    ("he", 3, False, 3.0),
    ("she", 3, False, 3.0),
    ("we", 1, True, 2.0),
    ("they", 3, True, 2.0),
)
OBJECT_PRONOUNS: tuple[tuple[str, int, bool], ...] = (
    ("me", 1, False),
    ("you", 2, False),
    ("him", 3, False),
    ("her", 3, False),
    ("us", 1, True),
    ("them", 3, True),
)

SINGULAR_DETERMINERS: tuple[tuple[str, float], ...] = (
    ("the", 50), ("a", 32), ("this", 3), ("that", 2), ("my", 4), ("your", 2), ("his", 3),
    ("her", 3), ("our", 2), ("their", 2),
)
PLURAL_DETERMINERS: tuple[tuple[str, float], ...] = (
    ("the", 40), ("", 16), ("some", 10), ("these", 3), ("those", 3), ("two", 4), ("three", 3),
    ("four", 1), ("many", 4), ("my", 4), ("your", 2), ("his", 2), ("her", 2), ("our", 2),
    ("their", 2),
)
MASS_DETERMINERS: tuple[tuple[str, float], ...] = (
    ("the", 40), ("", 35), ("some", 15), ("my", 3), ("your", 1), ("his", 2), ("her", 2),
    ("our", 1), ("their", 1),
)
INDEFINITE_PLURAL_DETERMINERS: tuple[tuple[str, float], ...] = (
    ("", 40), ("some", 30), ("two", 10), ("three", 8), ("many", 12),
)
INDEFINITE_MASS_DETERMINERS: tuple[tuple[str, float], ...] = (("", 50), ("some", 50))
# Determiners of the nouns in locations, goals and other prepositional phrases.
GROUND_SINGULAR_DETERMINERS: tuple[tuple[str, float], ...] = (
    ("the", 65), ("a", 15), ("this", 2), ("that", 2), ("my", 4), ("your", 2), ("his", 3),
    ("her", 3), ("our", 2), ("their", 2),
)
GROUND_PLURAL_DETERMINERS: tuple[tuple[str, float], ...] = (
    ("the", 70), ("these", 3), ("those", 3), ("my", 5), ("your", 3), ("his", 4), ("her", 4),
    ("our", 4), ("their", 4),
)
GROUND_MASS_DETERMINERS: tuple[tuple[str, float], ...] = (("the", 80), ("my", 10), ("our", 10))

# Words whose first letter misleads the choice between "a" and "an".
A_BEFORE_VOWEL: tuple[str, ...] = ("useful", "university", "uniform", "unique", "usual", "one")
AN_BEFORE_CONSONANT: tuple[str, ...] = ("hour", "honest", "honour")

# (host tags, preposition, ground tags, weight): prepositional phrases modifying a noun.
NOUN_PPS: tuple[tuple[str, str, str, float], ...] = (
    ("person", "with", "clothes", 3),
    ("person", "from", "settlement", 3),
    ("person", "in", "room outdoor", 2),
    ("person", "at", "loc_at", 1),
    ("animal", "in", "outdoor room", 3),
    ("animal", "under", "under", 2),
    ("animal", "on", "surface", 1),
    ("portable", "on", "surface", 3),
    ("portable", "in", "container room", 2),
    ("portable", "under", "under", 1),
    ("portable", "from", "shop", 1),
    ("portable", "for", "person", 1),
    ("food", "on", "surface", 2),
    ("food", "in", "container", 2),
    ("food", "from", "shop", 1),
    ("food", "for", "person", 1),
    ("drink", "in", "container", 2),
    ("place", "near", "landmark", 3),
    ("building", "in", "settlement", 2),
    ("outdoor", "behind", "building", 1),
    ("text", "about", "person animal place event", 3),
    ("text", "from", "person", 1),
    ("event", "in", "outdoor building", 2),
    ("vehicle", "from", "settlement", 1),
    ("furniture", "in", "room", 2),
)

# (locatum tags, preposition, ground tags, weight): where someone or something is.
LOCATIONS: tuple[tuple[str, str, str, float], ...] = (
    ("person animal event", "in", "loc_in", 5),
    ("person animal event", "at", "loc_at", 3),
    ("person animal", "on", "loc_on", 2),
    ("person animal building vehicle", "near", "landmark", 2),
    ("animal portable food", "under", "under", 1),
    ("portable food drink", "on", "surface", 4),
    ("portable food drink", "in", "container room", 3),
    ("furniture", "in", "room", 3),
    ("vehicle", "in", "settlement", 2),
)

LOCATUM_TAGS = frozenset(("person", "animal", "portable", "food", "drink", "furniture", "vehicle"))
AGENT_TAGS = frozenset(("person", "animal"))
PREDICABLE_TAGS = frozenset(
    ("person", "animal", "thing", "food", "drink", "place", "text", "event", "idea")
)

TRANSPORT: tuple[tuple[str, ...], ...] = (
    ("by", "bus"), ("by", "train"), ("by", "car"), ("by", "taxi"), ("by", "bicycle"),
    ("by", "boat"), ("by", "plane"), ("on", "foot"),
)
INTO_VERBS: tuple[str, ...] = ("go", "come", "walk", "run", "move")
TRANSPORT_VERBS: tuple[str, ...] = ("go", "come", "travel", "return", "move")

MANNER_ADVERBS: tuple[str, ...] = (
    "quickly", "slowly", "carefully", "quietly", "loudly", "happily", "sadly", "well", "badly",
    "easily", "early", "late", "again", "suddenly",
)

TIMES: tuple[tuple[str, float], ...] = (("past", 45), ("present", 35), ("future", 20))
TENSES: dict[str, tuple[tuple[str, float], ...]] = {
    "past": (("past", 70), ("pastprog", 30)),
    "present": (("pres", 50), ("prog", 25), ("perf", 25)),
    "future": (("fut", 1),),
}
STATIVE_TENSE = {"prog": "pres", "pastprog": "past"}

# Time adverbials by the tense (or, for "fut", the future meaning) they go with.
TIME_ADVERBIALS: dict[str, tuple[str, ...]] = {
    "pres": (
        "every day", "every morning", "every evening", "every week", "every year",
        "in the morning", "in the evening", "at night", "on the weekend", "after school",
    ),
    "past": (
        "yesterday", "last night", "last week", "last year", "last month", "last summer",
        "last winter", "this morning", "two days ago", "a week ago", "a year ago",
        "yesterday morning", "yesterday afternoon", "after dinner", "after lunch",
    ),
    "fut": (
        "tomorrow", "soon", "later", "next week", "next year", "next month", "next summer",
        "tonight", "this evening", "tomorrow morning", "tomorrow afternoon", "after dinner",
    ),
    "prog": ("now", "today", "at the moment", "this week", "this afternoon"),
    "pastprog": (
        "yesterday", "last night", "all day", "all morning", "in the afternoon", "at that time",
    ),
    "perf": ("today", "this week", "this year", "this morning", "recently", "before"),
}

# Adverbs between the auxiliary and the verb, by tense, for statements and for questions.
PRE_ADVERBS: dict[tuple[str, bool], tuple[str, ...]] = {
    ("pres", False): ("often", "always", "sometimes", "usually", "never"),
    ("pres", True): ("often", "always", "usually"),
    ("past", False): ("often", "always", "never", "suddenly", "finally"),
    ("past", True): ("often", "always", "finally"),
    ("fut", False): ("always", "never", "probably", "soon"),
    ("fut", True): ("always", "soon"),
    ("prog", False): ("still",),
    ("prog", True): ("still",),
    ("pastprog", False): ("still",),
    ("pastprog", True): ("still",),
    ("perf", False): ("already", "just", "never", "always"),
    ("perf", True): ("ever", "already", "just"),
}
COPULA_ADVERBS: dict[str, tuple[str, ...]] = {
    "pres": ("often", "always", "sometimes", "usually", "never"),
    "past": ("often", "always", "never"),
    "fut": ("always", "never", "probably"),
    "perf": ("always", "never"),
}

SUBORDINATORS: tuple[tuple[str, float], ...] = (
    ("because", 20), ("when", 20), ("although", 10), ("if", 14), ("before", 10), ("after", 12),
    ("while", 10),
)
# Tenses of a subordinate clause given its subordinator and the time of the main clause;
# missing pairs fall back to the tenses of the time itself.
SUBORDINATE_TENSES: dict[tuple[str, str], tuple[tuple[str, float], ...]] = {
    ("because", "future"): (("fut", 6), ("pres", 4)),
    ("although", "future"): (("fut", 6), ("pres", 4)),
    ("when", "past"): (("past", 8), ("pastprog", 2)),
    ("when", "present"): (("pres", 1),),
    ("when", "future"): (("pres", 1),),
    ("if", "present"): (("pres", 1),),
    ("if", "future"): (("pres", 1),),
    ("before", "past"): (("past", 1),),
    ("before", "present"): (("pres", 1),),
    ("before", "future"): (("pres", 1),),
    ("after", "past"): (("past", 1),),
    ("after", "present"): (("pres", 1),),
    ("after", "future"): (("pres", 7), ("perf", 3)),
    ("while", "past"): (("pastprog", 7), ("past", 3)),
    ("while", "present"): (("prog", 6), ("pres", 4)),
    ("while", "future"): (("prog", 5), ("pres", 5)),
}

CLAUSE_KINDS: tuple[tuple[str, float], ...] = (
    ("trans", 30), ("intr", 8), ("motion", 9), ("prep", 9), ("place", 4), ("ditr", 7),
    ("copula", 11), ("there", 4), ("that", 7), ("inf", 8), ("weather", 2),
)
EMBEDDED_KINDS: tuple[tuple[str, float], ...] = (
    ("trans", 30), ("intr", 10), ("motion", 9), ("prep", 9), ("place", 4), ("ditr", 5),
    ("copula", 14), ("there", 3), ("inf", 4), ("weather", 6),
)
WH_WORDS: tuple[tuple[str, float], ...] = (
    ("what", 24), ("who", 18), ("where", 18), ("when", 12), ("why", 15), ("how", 13),
)

# (marker, weight, condition): sentence-initial discourse markers and interjections, followed
# by a comma, as in spoken English ("Well, ...", "In fact, ...").  The condition is "" (any
# statement), "positive" or "negative" (a statement with or without "not": "Yes, I like tea.",
# "No, I do not like tea.") or a time the statement must have ("At first, ..." narrates the
# past).  Each marker was checked with apertium on 150 statements: eng-spa and eng-spa | es-pt
# translate it as a unit, keep its comma, leave no unknown or generation marks and do not change
# the translation of the rest of the sentence (but for the tagger's context effects, see
# translate.py).  Left out for their translation: "so" (es "Tan"), "look"
# ("Cariz"), "right" ("Derecho"), "please" ("Complacer"), "otherwise" (unknown), "after that"
# ("Después de que aquello"), "still" ("Todavía"), "meanwhile", "instead", "by the way" (pt
# "Enquanto", "Em mudança", "Por verdadeiro"), "okay" (pt "Vale").
DISCOURSE_MARKERS: tuple[tuple[str, float, str], ...] = (
    ("well", 14, ""), ("yes", 5, "positive"), ("no", 5, "negative"), ("of course", 7, ""),
    ("however", 6, ""), ("then", 5, ""), ("also", 4, ""), ("in fact", 6, ""), ("actually", 6, ""),
    ("now", 6, ""), ("first", 3, ""), ("finally", 4, ""), ("oh", 3, ""), ("listen", 2, ""),
    ("luckily", 3, ""), ("fortunately", 2, ""), ("unfortunately", 4, ""), ("sadly", 2, ""),
    ("anyway", 3, ""), ("besides", 2, ""), ("honestly", 2, ""), ("at first", 2, "past"),
    ("in the end", 3, "past"), ("for example", 4, ""), ("next", 2, ""), ("therefore", 2, ""),
    ("clearly", 2, ""), ("obviously", 2, ""), ("indeed", 2, ""), ("naturally", 2, ""),
)
# Markers that also open a question ("Well, where did you go?").  Apertium translates them as
# in statements, though the question after them comes out a little differently (it drops the
# "Hizo" of do-support, for one).
QUESTION_MARKERS: tuple[tuple[str, float], ...] = (
    ("well", 4), ("now", 2), ("then", 2), ("oh", 1), ("actually", 1),
)
# Forms of address, after a comma at the end of a statement or question ("..., my friend.").
VOCATIVES: tuple[tuple[str, float], ...] = (("my friend", 3), ("my friends", 2))
# Determiners after which a noun phrase can take a non-restrictive relative clause ("my brother,
# who lives in the city, ..."): the phrase must pick out its referent by itself.
DEFINITE_DETERMINERS = frozenset(
    ("the", "this", "that", "these", "those", "my", "your", "his", "her", "our", "their")
)

# Words the rules emit directly, besides those of the tables above.
FUNCTION_WORDS: tuple[str, ...] = (
    "a", "an", "the", "not", "do", "does", "did", "will", "am", "is", "are", "was", "were", "be",
    "been", "has", "have", "to", "and", "but", "that", "which", "who", "what", "where", "when",
    "why", "how", "there", "it", "very", "home", "at", "into", "across", "with", "for", "it",
    "they",
)

# Probabilities, indexed by depth (0 = main clause) where they are tuples.
P_PLURAL = 0.3
P_GROUND_PLURAL = 0.12
P_ADJECTIVE = (0.45, 0.3, 0.15, 0.08)
P_TWO_ADJECTIVES = (0.1, 0.05, 0.0, 0.0)
P_VERY = 0.15
P_NOUN_PP = (0.2, 0.1, 0.03, 0.0)
P_RELATIVE = (0.18, 0.07, 0.02, 0.0)
P_SUBJECT_PRONOUN = 0.18
P_OBJECT_PRONOUN = 0.12
P_COORDINATED_SUBJECT = (0.05, 0.02, 0.0, 0.0)
P_LOCATION = (0.5, 0.3, 0.12, 0.05)
P_MANNER = (0.15, 0.1, 0.05, 0.05)
P_COMPANION = (0.06, 0.03, 0.0, 0.0)
P_TIME = (0.45, 0.25, 0.1, 0.05)
P_ADVERB = 0.1
P_NEGATIVE = 0.2
P_SUBORDINATE_NEGATIVE = 0.1
P_YES_NO = 0.15
P_WH = 0.2
P_SUBORDINATE = 0.35
P_COORDINATION = 0.15
P_VP_COORDINATION = 0.06
P_FRONT_TIME = 0.06
P_QUESTION_SUBORDINATE = 0.3
P_WHICH = 0.25
# Commas inside the sentence, besides fronted clauses and adverbials and ", but".
P_MARKER = 0.22
P_QUESTION_MARKER = 0.06
P_VOCATIVE = 0.03
P_LIST_SUBJECT = (0.05, 0.02, 0.0, 0.0)
P_LIST_OBJECT = (0.06, 0.02, 0.0, 0.0)
P_FOURTH_ITEM = 0.2
P_LIST_WITH_I = 0.2
P_ADJECTIVE_LIST = 0.15
P_NONRESTRICTIVE = (0.08, 0.04, 0.0, 0.0)
MAX_DEPTH = 3


# --------------------------------------------------------------------------------------------
# Data structures.
# --------------------------------------------------------------------------------------------


class _Weighted(Generic[T]):
    """A weighted table of items, drawn with one ``random()`` call."""

    __slots__ = ("items", "cumulative", "total")

    def __init__(self, table: Iterable[tuple[T, float]]) -> None:
        rows = tuple(table)
        self.items: tuple[T, ...] = tuple(item for item, _ in rows)
        self.cumulative: tuple[float, ...] = tuple(accumulate(weight for _, weight in rows))
        self.total = self.cumulative[-1]

    def pick(self, rng: random.Random) -> T:
        return self.items[bisect(self.cumulative, rng.random() * self.total)]


@dataclass(frozen=True, slots=True)
class _Noun:
    singular: str
    plural: str
    tags: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Adjective:
    word: str
    rank: int
    tags: frozenset[str]
    gradable: bool


@dataclass(frozen=True, slots=True)
class _Forms:
    base: str
    third: str
    past: str
    participle: str
    ing: str


@dataclass(frozen=True, slots=True)
class _Frame:
    """A verb with its complement pattern and the tags of its subject and complements."""

    kind: str
    verb: str
    subject: frozenset[str]
    objects: frozenset[str] = frozenset()
    prep: str = ""
    recipient: frozenset[str] = frozenset()
    stative: bool = False


@dataclass(frozen=True, slots=True)
class _Rule:
    """A preposition linking a host (noun or locatum) to a ground noun phrase."""

    host: frozenset[str]
    prep: str
    ground: frozenset[str]


@dataclass(slots=True)
class _Phrase:
    """A noun phrase with what agreement and selection need: person, number, tags, head."""

    words: list[str]
    person: int = 3
    plural: bool = False
    tags: frozenset[str] = frozenset()
    head: str = ""


@dataclass(slots=True)
class _Slot:
    """Words after the verb group, with the (wh-phrase, words left behind) that may replace them."""

    words: list[str]
    wh: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()


@dataclass(slots=True)
class _Clause:
    """A clause before word order is fixed; ``verb`` None is the copula ``be``."""

    subject: _Phrase
    verb: _Forms | None
    tense: str
    negative: bool = False
    adverb: str = ""
    slots: list[_Slot] = field(default_factory=list)
    open_wh: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------
# Morphology and table compilation.
# --------------------------------------------------------------------------------------------

_VOWELS = "aeiou"


def _tags(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _regular_plural(word: str) -> str:
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2] not in _VOWELS:
        return word[:-1] + "ies"
    return word + "s"


def _verb_forms(base: str, past: str = "", participle: str = "") -> _Forms:
    if base == "have":
        third = "has"
    elif base.endswith(("s", "x", "z", "ch", "sh", "o")):
        third = base + "es"
    elif base.endswith("y") and base[-2] not in _VOWELS:
        third = base[:-1] + "ies"
    else:
        third = base + "s"
    doubled = base + base[-1] if base in DOUBLING_VERBS else base
    if not past:
        if base.endswith("e"):
            past = base + "d"
        elif base.endswith("y") and base[-2] not in _VOWELS:
            past = base[:-1] + "ied"
        else:
            past = doubled + "ed"
        participle = past
    if base.endswith("ie"):
        ing = base[:-2] + "ying"
    elif base.endswith("e") and not base.endswith(("ee", "ye", "oe")):
        ing = base[:-1] + "ing"
    else:
        ing = doubled + "ing"
    return _Forms(base, third, past, participle or past, ing)


def _compile_nouns() -> tuple[_Noun, ...]:
    nouns = [
        _Noun(singular, plural or _regular_plural(singular), _tags(tags))
        for singular, plural, tags in COUNT_NOUNS
    ]
    nouns += [_Noun(word, "", _tags(tags)) for word, tags in MASS_NOUNS]
    return tuple(nouns)


def _compile_frames() -> dict[str, tuple[_Frame, ...]]:
    stative = frozenset(STATIVE_VERBS)
    frames: dict[str, tuple[_Frame, ...]] = {
        "intr": tuple(_Frame("intr", v, _tags(s)) for v, s in INTRANSITIVE),
        "motion": tuple(_Frame("motion", v, _tags(s)) for v, s in MOTION),
        "trans": tuple(
            _Frame("trans", v, _tags(s), _tags(o), stative=v in stative) for v, s, o in TRANSITIVE
        ),
        "prep": tuple(
            _Frame("prep", v, _tags(s), _tags(o), p, stative=v == "belong")
            for v, p, s, o in PREPOSITIONAL
        ),
        "place": tuple(_Frame("place", v, _tags(s), _tags(o), p) for v, p, s, o in PLACE_VERBS),
        "ditr": tuple(
            _Frame("ditr", v, _tags(s), _tags(o), p, _tags(r)) for v, p, s, r, o in DITRANSITIVE
        ),
        "that": tuple(
            _Frame("that", v, _tags(s), recipient=_tags("person") if r else frozenset(),
                   stative=v in stative)
            for v, s, r in THAT_VERBS
        ),
        "inf": tuple(_Frame("inf", v, _tags(s), stative=v in stative) for v, s in INFINITIVE_VERBS),
        "event": tuple(_Frame("intr", v, _tags("event")) for v in EVENT_VERBS),
    }
    return frames


NOUNS: tuple[_Noun, ...] = _compile_nouns()
ADJECTIVE_ENTRIES: tuple[_Adjective, ...] = tuple(
    _Adjective(word, rank, _tags(tags), gradable) for word, rank, tags, gradable in ADJECTIVES
)
FRAMES: dict[str, tuple[_Frame, ...]] = _compile_frames()
_IRREGULAR = {base: (past, participle) for base, past, participle in IRREGULAR_VERBS}
VERB_FORMS: dict[str, _Forms] = {
    verb: _verb_forms(verb, *_IRREGULAR.get(verb, ("", "")))
    for verb in sorted(
        {frame.verb for frames in FRAMES.values() for frame in frames} | set(WEATHER_VERBS)
    )
}

_NOUN_PP_RULES = tuple((_Rule(_tags(h), p, _tags(g)), w) for h, p, g, w in NOUN_PPS)
_LOCATION_RULES = tuple((_Rule(_tags(h), p, _tags(g)), w) for h, p, g, w in LOCATIONS)
_INFINITIVE_VERBS = frozenset(verb for verb, _ in INFINITIVE_VERBS)
_INNER_KINDS = ("intr", "motion", "trans", "prep", "place", "ditr")
_RELATIVE_SUBJECT_KINDS = ("intr", "motion", "trans", "prep", "place", "ditr", "inf")
_RELATIVE_OBJECT_KINDS = ("trans", "prep", "place", "ditr")

_W_TIMES = _Weighted(TIMES)
_W_TENSES = {time: _Weighted(table) for time, table in TENSES.items()}
_W_SUBORDINATE_TENSES = {key: _Weighted(table) for key, table in SUBORDINATE_TENSES.items()}
_W_SUBORDINATORS = _Weighted(SUBORDINATORS)
_W_CLAUSE_KINDS = _Weighted(CLAUSE_KINDS)
_W_EMBEDDED_KINDS = _Weighted(EMBEDDED_KINDS)
_W_WH = _Weighted(WH_WORDS)
_W_SINGULAR = _Weighted(SINGULAR_DETERMINERS)
_W_PLURAL = _Weighted(PLURAL_DETERMINERS)
_W_MASS = _Weighted(MASS_DETERMINERS)
_W_INDEF_PLURAL = _Weighted(INDEFINITE_PLURAL_DETERMINERS)
_W_INDEF_MASS = _Weighted(INDEFINITE_MASS_DETERMINERS)
_W_GROUND_SINGULAR = _Weighted(GROUND_SINGULAR_DETERMINERS)
_W_GROUND_PLURAL = _Weighted(GROUND_PLURAL_DETERMINERS)
_W_GROUND_MASS = _Weighted(GROUND_MASS_DETERMINERS)
_W_SUBJECT_PRONOUNS = _Weighted((row[:3], row[3]) for row in SUBJECT_PRONOUNS)
_W_DISCOURSE_MARKERS = _Weighted((row[::2], row[1]) for row in DISCOURSE_MARKERS)
_W_QUESTION_MARKERS = _Weighted(QUESTION_MARKERS)
_W_VOCATIVES = _Weighted(VOCATIVES)


def _article(word: str) -> str:
    if word in A_BEFORE_VOWEL:
        return "a"
    if word[0] in _VOWELS or word in AN_BEFORE_CONSONANT:
        return "an"
    return "a"


def _be_present(person: int, plural: bool) -> str:
    if plural or person == 2:
        return "are"
    return "am" if person == 1 else "is"


def _be_past(person: int, plural: bool) -> str:
    return "were" if plural or person == 2 else "was"


def _verb_group(
    verb: _Forms | None,
    tense: str,
    subject: _Phrase,
    negative: bool,
    adverb: str,
    inverted: bool,
) -> tuple[str, list[str]]:
    """The operator (fronted in questions, "" if none) and the rest of the verb group."""
    person, plural = subject.person, subject.plural
    third = person == 3 and not plural
    if verb is None:
        if tense in ("pres", "prog"):
            chain = [_be_present(person, plural)]
        elif tense in ("past", "pastprog"):
            chain = [_be_past(person, plural)]
        elif tense == "fut":
            chain = ["will", "be"]
        else:
            chain = ["has" if third else "have", "been"]
    elif tense in ("pres", "past"):
        if not negative and not inverted:
            if tense == "past":
                finite = verb.past
            else:
                finite = verb.third if third else verb.base
            return "", [adverb, finite] if adverb else [finite]
        operator = "did" if tense == "past" else "does" if third else "do"
        chain = [operator, verb.base]
    elif tense == "fut":
        chain = ["will", verb.base]
    elif tense == "prog":
        chain = [_be_present(person, plural), verb.ing]
    elif tense == "pastprog":
        chain = [_be_past(person, plural), verb.ing]
    else:
        chain = ["has" if third else "have", verb.participle]
    middle = (["not"] if negative else []) + ([adverb] if adverb else [])
    if inverted:
        return chain[0], middle + chain[1:]
    return "", [chain[0], *middle, *chain[1:]]


def _slot_words(slots: Sequence[_Slot]) -> list[str]:
    return [word for slot in slots for word in slot.words]


def _predicate(clause: _Clause) -> list[str]:
    _, group = _verb_group(
        clause.verb, clause.tense, clause.subject, clause.negative, clause.adverb, False
    )
    return group + _slot_words(clause.slots)


def _declarative(clause: _Clause) -> list[str]:
    return clause.subject.words + _predicate(clause)


def _question(clause: _Clause, slots: Sequence[_Slot] | None = None) -> list[str]:
    operator, rest = _verb_group(
        clause.verb, clause.tense, clause.subject, clause.negative, clause.adverb, True
    )
    if slots is None:
        slots = clause.slots
    return [operator, *clause.subject.words, *rest, *_slot_words(slots)]


def _punctuate(tokens: Sequence[str]) -> list[str]:
    """``tokens`` without the commas that meet another comma or the end of the sentence.

    A non-restrictive relative clause is closed by a comma wherever it ends; when its noun
    phrase ends a clause that is followed by a comma anyway (a fronted subordinate clause,
    ", but") or ends the sentence, the one comma or the final stop is all English writes.
    """
    out: list[str] = []
    for token in tokens:
        if token == "," and (not out or out[-1] == ","):
            continue
        out.append(token)
    while out and out[-1] == ",":
        out.pop()
    return out


def _finish(tokens: Sequence[str], question: bool) -> str:
    first = tokens[0]
    parts = [first[0].upper() + first[1:]]
    for token in tokens[1:]:
        if token == ",":
            parts[-1] += ","
        else:
            parts.append(token)
    return " ".join(parts) + ("?" if question else ".")


def _word_count(tokens: Sequence[str]) -> int:
    return sum(token != "," for token in tokens)


# --------------------------------------------------------------------------------------------
# The grammar.
# --------------------------------------------------------------------------------------------


class Grammar:
    """A sentence generator with its own ``random.Random(seed)``."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._noun_cache: dict[frozenset[str], tuple[_Noun, ...]] = {}
        self._adjective_cache: dict[frozenset[str], tuple[_Adjective, ...]] = {}
        self._rule_cache: dict[tuple[str, frozenset[str]], _Weighted[_Rule] | None] = {}
        self._frame_cache: dict[tuple[str, frozenset[str]], tuple[_Frame, ...]] = {}

    # ---- public ------------------------------------------------------------------------

    def sentence(self) -> str:
        """One sentence, with a capital first letter and a final "." or "?"."""
        while True:
            tokens, question = self._sentence()
            tokens = _punctuate(tokens)
            if MIN_WORDS <= _word_count(tokens) <= MAX_WORDS:
                return _finish(tokens, question)

    # ---- lookups -----------------------------------------------------------------------

    def _nouns(self, tags: frozenset[str]) -> tuple[_Noun, ...]:
        nouns = self._noun_cache.get(tags)
        if nouns is None:
            nouns = tuple(noun for noun in NOUNS if noun.tags & tags)
            self._noun_cache[tags] = nouns
        return nouns

    def _adjectives_for(self, tags: frozenset[str]) -> tuple[_Adjective, ...]:
        adjectives = self._adjective_cache.get(tags)
        if adjectives is None:
            adjectives = tuple(adj for adj in ADJECTIVE_ENTRIES if adj.tags & tags)
            self._adjective_cache[tags] = adjectives
        return adjectives

    def _rules(self, table: str, tags: frozenset[str]) -> _Weighted[_Rule] | None:
        key = (table, tags)
        if key not in self._rule_cache:
            rows = _NOUN_PP_RULES if table == "noun" else _LOCATION_RULES
            matching = [(rule, weight) for rule, weight in rows if rule.host & tags]
            self._rule_cache[key] = _Weighted(matching) if matching else None
        return self._rule_cache[key]

    def _frames(self, kind: str, tags: frozenset[str], role: str = "subject") -> tuple[
        _Frame, ...
    ]:
        key = (kind + ":" + role, tags)
        frames = self._frame_cache.get(key)
        if frames is None:
            if role == "subject":
                frames = tuple(f for f in FRAMES[kind] if f.subject & tags)
            else:
                frames = tuple(f for f in FRAMES[kind] if f.objects & tags)
            self._frame_cache[key] = frames
        return frames

    # ---- sentences ---------------------------------------------------------------------

    def _sentence(self) -> tuple[list[str], bool]:
        rng = self._rng
        r = rng.random()
        if r < P_YES_NO + P_WH:
            words = self._yes_no_question() if r < P_YES_NO else self._wh_question()
            if rng.random() < P_QUESTION_MARKER:
                words = [*_W_QUESTION_MARKERS.pick(rng).split(), ",", *words]
            question = True
        else:
            words = self._statement()
            question = False
        if rng.random() < P_VOCATIVE:
            words += [",", *_W_VOCATIVES.pick(rng).split()]
        return words, question

    def _statement(self) -> list[str]:
        rng = self._rng
        time = _W_TIMES.pick(rng)
        words = self._declaration(time)
        if rng.random() < P_MARKER:
            words = [*self._marker(time, words), ",", *words]
        return words

    def _marker(self, time: str, words: Sequence[str]) -> list[str]:
        """A discourse marker that fits the statement ``words`` of time ``time``.

        Its condition must hold (see ``DISCOURSE_MARKERS``) and its last word must not occur in
        the statement: no "Finally, he finally left." or "Well, she sings well."
        """
        polarity = "negative" if "not" in words else "positive"
        while True:
            marker, condition = _W_DISCOURSE_MARKERS.pick(self._rng)
            tokens = marker.split()
            if condition in ("", polarity, time) and tokens[-1] not in words:
                return tokens

    def _declaration(self, time: str) -> list[str]:
        rng = self._rng
        r = rng.random()
        if r < P_SUBORDINATE:
            main = _declarative(self._clause(time, 0, neg_p=P_NEGATIVE))
            sub = self._subordinate(time, 1)
            if rng.random() < 0.5:
                return sub + [","] + main
            return main + sub
        r -= P_SUBORDINATE
        if r < P_COORDINATION:
            first = _declarative(self._clause(time, 1, neg_p=P_NEGATIVE))
            second = _declarative(self._clause(time, 1, neg_p=0.35))
            if rng.random() < 0.55:
                return first + ["and"] + second
            return first + [",", "but"] + second
        r -= P_COORDINATION
        if r < P_VP_COORDINATION:
            return self._vp_coordination(time)
        r -= P_VP_COORDINATION
        clause = self._clause(time, 0, neg_p=P_NEGATIVE)
        if r < P_FRONT_TIME:
            for i, slot in enumerate(clause.slots):
                if slot.wh and slot.wh[0][0] == ("when",):
                    del clause.slots[i]
                    return slot.words + [","] + _declarative(clause)
        return _declarative(clause)

    def _vp_coordination(self, time: str) -> list[str]:
        rng = self._rng
        tense = _W_TENSES[time].pick(rng)
        kind = _W_CLAUSE_KINDS.pick(rng)
        while kind in ("there", "weather", "that", "copula"):
            kind = _W_CLAUSE_KINDS.pick(rng)
        first = self._clause(time, 1, kind=kind, tense=tense, neg_p=0.1)
        but = rng.random() < 0.4
        second = self._clause(
            time, 1, kind=rng.choice(("trans", "trans", "intr", "motion", "prep")),
            subject=first.subject, tense=first.tense,
            neg_p=0.6 if but else 0.0,
        )
        return _declarative(first) + ["but" if but else "and"] + _predicate(second)

    def _yes_no_question(self) -> list[str]:
        rng = self._rng
        time = _W_TIMES.pick(rng)
        clause = self._clause(time, 0, question=True, neg_p=0.03)
        words = _question(clause)
        if rng.random() < P_QUESTION_SUBORDINATE:
            words += self._subordinate(time, 1)
        return words

    def _wh_question(self) -> list[str]:
        rng = self._rng
        target = _W_WH.pick(rng)
        time = _W_TIMES.pick(rng)
        words: list[str] | None = None
        while words is None:
            words = self._try_wh(target, time)
        if rng.random() < P_QUESTION_SUBORDINATE:
            words += self._subordinate(time, 1, exclude="because" if target == "why" else "")
        return words

    def _try_wh(self, target: str, time: str) -> list[str] | None:
        rng = self._rng
        if target == "who" and rng.random() < 0.45:
            who = _Phrase(["who"], 3, False, _tags("person"))
            return _declarative(self._clause(time, 0, question=True, subject=who, neg_p=0.05))
        if target == "what" and rng.random() < 0.15:
            what = _Phrase(["what"], 3, False, _tags("event"))
            if rng.random() < 0.5:
                clause = self._build(FRAMES["event"][0], time, 0, subject=what, question=True)
            else:
                what.tags = _tags("portable food")
                clause = self._copula(time, 0, subject=what, question=True, mode="loc")
            return _declarative(clause)
        neg_p = 0.25 if target == "why" else 0.02
        clause = self._clause(time, 0, question=True, neg_p=neg_p, exclude=("there",))
        word = "which" if target in ("what", "who") and rng.random() < P_WHICH else target
        options = [
            (i, wh, residue)
            for i, slot in enumerate(clause.slots)
            for wh, residue in slot.wh
            if wh[0] == word
        ]
        if options:
            index, wh, residue = options[int(rng.random() * len(options))]
            slots = list(clause.slots)
            slots[index] = _Slot(list(residue))
            return [*wh, *_question(clause, slots)]
        if target in clause.open_wh:
            return [target, *_question(clause)]
        return None

    def _subordinate(self, time: str, depth: int, exclude: str = "") -> list[str]:
        rng = self._rng
        word = _W_SUBORDINATORS.pick(rng)
        while word == exclude or (word == "if" and time == "past"):
            word = _W_SUBORDINATORS.pick(rng)
        table = _W_SUBORDINATE_TENSES.get((word, time)) or _W_TENSES[time]
        tense = table.pick(rng)
        adverbial = "fut" if time == "future" and tense in ("pres", "prog") else tense
        clause = self._clause(
            time, depth, neg_p=P_SUBORDINATE_NEGATIVE, tense=tense, adverbial=adverbial,
            embedded=True,
        )
        return [word, *_declarative(clause)]

    # ---- clauses -----------------------------------------------------------------------

    def _clause(
        self,
        time: str,
        depth: int,
        *,
        question: bool = False,
        neg_p: float = 0.0,
        kind: str = "",
        subject: _Phrase | None = None,
        tense: str = "",
        adverbial: str = "",
        embedded: bool = False,
        exclude: tuple[str, ...] = (),
    ) -> _Clause:
        rng = self._rng
        kinds = _W_EMBEDDED_KINDS if embedded or depth > 0 else _W_CLAUSE_KINDS
        while not kind:
            kind = kinds.pick(rng)
            if kind in exclude or (subject is not None and kind in ("there", "weather")):
                kind = ""
            elif depth >= 2 and kind in ("that", "inf"):
                kind = ""
        if kind == "copula":
            return self._copula(
                time, depth, subject=subject, question=question, neg_p=neg_p, tense=tense,
                adverbial=adverbial,
            )
        if kind == "there":
            return self._existential(time, depth, tense=tense, adverbial=adverbial)
        if kind == "weather":
            return self._weather(time, depth, question=question, neg_p=neg_p, tense=tense,
                                 adverbial=adverbial)
        if subject is None:
            frame = rng.choice(FRAMES[kind])
        else:
            frames = self._frames(kind, subject.tags)
            if not frames:
                return self._clause(time, depth, question=question, neg_p=neg_p,
                                    subject=subject, tense=tense, adverbial=adverbial,
                                    embedded=embedded, kind="trans" if kind != "trans" else "intr")
            frame = rng.choice(frames)
        return self._build(
            frame, time, depth, subject=subject, question=question, neg_p=neg_p, tense=tense,
            adverbial=adverbial,
        )

    def _tense(self, time: str, tense: str, stative: bool) -> str:
        if not tense:
            tense = _W_TENSES[time].pick(self._rng)
        if stative:
            return STATIVE_TENSE.get(tense, tense)
        return tense

    def _build(
        self,
        frame: _Frame,
        time: str,
        depth: int,
        *,
        subject: _Phrase | None = None,
        obj: _Phrase | None = None,
        question: bool = False,
        neg_p: float = 0.0,
        tense: str = "",
        adverbial: str = "",
        finite: bool = True,
    ) -> _Clause:
        rng = self._rng
        d = min(depth, MAX_DEPTH)
        tense = self._tense(time, tense, frame.stative)
        kind = frame.kind
        inner: _Frame | None = None
        if kind == "inf":
            subject_tags = subject.tags if subject is not None else frame.subject
            candidates = [
                f
                for k in _INNER_KINDS
                for f in self._frames(k, subject_tags & frame.subject or frame.subject)
                if f.verb not in _INFINITIVE_VERBS
            ]
            inner = candidates[int(rng.random() * len(candidates))]
            if subject is None:
                subject = self._subject(frame.subject & inner.subject, depth)
        if subject is None:
            subject = self._subject(frame.subject, depth)
        slots: list[_Slot] = []
        if kind == "trans":
            o = obj or self._object(frame.objects, depth, subject)
            slots.append(_Slot(o.words, self._object_wh(o, ())))
        elif kind == "prep":
            o = obj or self._object(frame.objects, depth, subject)
            slots.append(_Slot([frame.prep, *o.words], self._object_wh(o, (frame.prep,))))
        elif kind == "place":
            o = obj or self._noun_phrase(frame.objects, depth + 1, ground=True)
            slots.append(_Slot([frame.prep, *o.words], ((("where",), ()),)))
        elif kind == "motion":
            slots.append(self._goal(frame, depth))
            if frame.verb in TRANSPORT_VERBS and "person" in subject.tags and rng.random() < 0.2:
                slots.append(_Slot(list(rng.choice(TRANSPORT)), ((("how",), ()),)))
        elif kind == "ditr":
            recipient = self._object(frame.recipient, depth + 1, subject)
            theme = obj or self._noun_phrase(frame.objects, depth)
            if len(recipient.words) <= 3 and rng.random() < 0.55:
                slots.append(_Slot(recipient.words))
                slots.append(_Slot(theme.words, self._object_wh(theme, ())))
            else:
                slots.append(_Slot(theme.words, self._object_wh(theme, ())))
                slots.append(
                    _Slot([frame.prep, *recipient.words], self._object_wh(recipient, (frame.prep,)))
                )
        elif kind == "that":
            if frame.recipient:
                slots.append(_Slot(self._object(frame.recipient, depth + 1, subject).words))
            past = tense in ("past", "pastprog")
            embedded = self._clause(
                "past" if past else _W_TIMES.pick(rng), depth + 1, neg_p=P_NEGATIVE, embedded=True
            )
            slots.append(_Slot(["that", *_declarative(embedded)], ((("what",), ()),)))
        elif kind == "inf" and inner is not None:
            clause = self._build(inner, time, depth + 1, subject=subject, finite=False)
            assert clause.verb is not None
            slots.append(_Slot(["to", clause.verb.base]))
            slots.extend(clause.slots)

        agentive = not frame.stative and bool(subject.tags & AGENT_TAGS)
        clausal = kind in ("that", "inf")
        open_wh = ("when", "why", "where", "how") if agentive and not clausal else ("when", "why")
        if not clausal:
            if agentive and rng.random() < P_MANNER[d]:
                slots.append(_Slot([rng.choice(MANNER_ADVERBS)], ((("how",), ()),)))
            located = agentive or "event" in subject.tags
            if located and kind not in ("place", "motion") and rng.random() < P_LOCATION[d]:
                slots.append(_Slot(self._location(subject.tags, depth + 1), ((("where",), ()),)))
            if agentive and "person" in subject.tags and rng.random() < P_COMPANION[d]:
                prep = "with" if rng.random() < 0.6 else "for"
                companion = self._noun_phrase(_tags("person"), depth + 1)
                slots.append(_Slot([prep, *companion.words], ((("who",), (prep,)),)))
        negative = False
        adverb = ""
        if finite:
            negative = rng.random() < neg_p
            if not negative and rng.random() < P_ADVERB:
                adverb = rng.choice(PRE_ADVERBS[(tense, question)])
            if rng.random() < P_TIME[d]:
                key = adverbial or tense
                phrase = rng.choice(TIME_ADVERBIALS[key])
                slots.append(_Slot(phrase.split(), ((("when",), ()),)))
        return _Clause(
            subject, VERB_FORMS[frame.verb], tense, negative, adverb, slots, open_wh
        )

    def _copula(
        self,
        time: str,
        depth: int,
        *,
        subject: _Phrase | None = None,
        question: bool = False,
        neg_p: float = 0.0,
        tense: str = "",
        adverbial: str = "",
        mode: str = "",
    ) -> _Clause:
        rng = self._rng
        d = min(depth, MAX_DEPTH)
        tense = self._tense(time, tense, True)
        if not mode:
            r = rng.random()
            mode = "adj" if r < 0.5 else "loc" if r < 0.8 else "job"
            if subject is not None:
                if mode == "job" and "person" not in subject.tags:
                    mode = "adj"
                if mode == "loc" and not subject.tags & LOCATUM_TAGS:
                    mode = "adj"
                if mode == "adj" and not self._adjectives_for(subject.tags):
                    mode = "loc"
        if subject is None:
            if mode == "job":
                subject = self._subject(_tags("person"), depth)
            elif mode == "loc":
                subject = self._subject(LOCATUM_TAGS, depth)
            else:
                subject = self._subject(PREDICABLE_TAGS, depth)
        slots: list[_Slot] = []
        open_wh: tuple[str, ...] = ("why",)
        listed: list[str] | None = None
        if mode == "adj" and rng.random() < P_ADJECTIVE_LIST:
            listed = self._adjective_list(self._adjectives_for(subject.tags))
        if listed is not None:
            slots.append(_Slot(listed))
        elif mode == "adj":
            adjectives = self._adjectives_for(subject.tags)
            first = rng.choice(adjectives)
            r = rng.random()
            if r < 0.25 and first.gradable:
                slots.append(_Slot(["very", first.word]))
            elif r < 0.4:
                second = rng.choice(adjectives)
                if second.word == first.word:
                    slots.append(_Slot([first.word]))
                else:
                    slots.append(_Slot([first.word, "and", second.word]))
            else:
                wh = ((("how", first.word), ()),) if first.gradable else ()
                slots.append(_Slot([first.word], wh))
        elif mode == "loc":
            slots.append(_Slot(self._location(subject.tags, depth + 1), ((("where",), ()),)))
            open_wh = ("why", "when")
        else:
            noun = rng.choice(self._nouns(_tags("job")))
            adjectives = self._adjectives(noun, depth + 1)
            if subject.plural:
                slots.append(_Slot([*adjectives, noun.plural]))
            else:
                slots.append(_Slot([_article((adjectives or [noun.singular])[0]), *adjectives,
                                    noun.singular]))
        negative = rng.random() < neg_p
        adverb = ""
        if not negative and not question and rng.random() < P_ADVERB:
            adverb = rng.choice(COPULA_ADVERBS[tense])
        if rng.random() < P_TIME[d]:
            slots.append(
                _Slot(rng.choice(TIME_ADVERBIALS[adverbial or tense]).split(), ((("when",), ()),))
            )
        return _Clause(subject, None, tense, negative, adverb, slots, open_wh)

    def _adjective_list(self, adjectives: Sequence[_Adjective]) -> list[str] | None:
        """Three predicate adjectives: "big, quiet and friendly" (at most one of each size, age
        and colour rank, so no "big, small and ..."); None if there are not enough."""
        picked: list[_Adjective] = []
        for adjective in self._rng.sample(adjectives, min(len(adjectives), 8)):
            if adjective.rank == 0 or all(adjective.rank != p.rank for p in picked):
                picked.append(adjective)
                if len(picked) == 3:
                    return [picked[0].word, ",", picked[1].word, "and", picked[2].word]
        return None

    def _existential(self, time: str, depth: int, *, tense: str, adverbial: str) -> _Clause:
        rng = self._rng
        tense = self._tense(time, tense, True)
        pivot = self._noun_phrase(LOCATUM_TAGS, depth + 1, indefinite=True)
        subject = _Phrase(["there"], 3, pivot.plural)
        slots = [_Slot(pivot.words), _Slot(self._location(pivot.tags, depth + 1))]
        if rng.random() < P_TIME[min(depth, MAX_DEPTH)]:
            slots.append(_Slot(rng.choice(TIME_ADVERBIALS[adverbial or tense]).split()))
        return _Clause(subject, None, tense, False, "", slots, ())

    def _weather(
        self, time: str, depth: int, *, question: bool, neg_p: float, tense: str, adverbial: str
    ) -> _Clause:
        rng = self._rng
        it = _Phrase(["it"], 3, False, _tags("weather"))
        if rng.random() < 0.5:
            tense = self._tense(time, tense, False)
            slots: list[_Slot] = []
            verb: _Forms | None = VERB_FORMS[rng.choice(WEATHER_VERBS)]
            open_wh: tuple[str, ...] = ("when", "where", "why")
        else:
            tense = self._tense(time, tense, True)
            adjective = rng.choice(WEATHER_ADJECTIVES)
            if rng.random() < 0.25:
                slots = [_Slot(["very", adjective])]
            else:
                slots = [_Slot([adjective], ((("how", adjective), ()),))]
            verb = None
            open_wh = ("why",)
        negative = rng.random() < neg_p
        if rng.random() < P_TIME[min(depth, MAX_DEPTH)] + 0.2:
            slots.append(
                _Slot(rng.choice(TIME_ADVERBIALS[adverbial or tense]).split(), ((("when",), ()),))
            )
        return _Clause(it, verb, tense, negative, "", slots, open_wh)

    # ---- phrases -----------------------------------------------------------------------

    def _subject(self, tags: frozenset[str], depth: int) -> _Phrase:
        rng = self._rng
        d = min(depth, MAX_DEPTH)
        r = rng.random()
        if "person" in tags:
            if r < P_SUBJECT_PRONOUN:
                word, person, plural = _W_SUBJECT_PRONOUNS.pick(rng)
                return _Phrase([word], person, plural, _tags("person"))
            r -= P_SUBJECT_PRONOUN
            if r < P_COORDINATED_SUBJECT[d]:
                first = self._noun_phrase(_tags("person"), depth + 1)
                if rng.random() < 0.3:
                    return _Phrase([*first.words, "and", "I"], 1, True, _tags("person"))
                second = self._noun_phrase(_tags("person"), depth + 1)
                return _Phrase([*first.words, "and", *second.words], 3, True, _tags("person"))
            r -= P_COORDINATED_SUBJECT[d]
        elif "animal" in tags:
            if r < 0.08:
                plural = rng.random() < 0.3
                return _Phrase(["they" if plural else "it"], 3, plural, _tags("animal"))
            r -= 0.08
        if r < P_LIST_SUBJECT[d]:
            listed = self._list(tags, depth, subject=True)
            if listed is not None:
                return listed
        return self._noun_phrase(tags, depth)

    def _object(self, tags: frozenset[str], depth: int, subject: _Phrase) -> _Phrase:
        rng = self._rng
        if "person" in tags and rng.random() < P_OBJECT_PRONOUN:
            word, person, plural = rng.choice(OBJECT_PRONOUNS)
            if person == 3 or person != subject.person:
                return _Phrase([word], person, plural, _tags("person"))
        if rng.random() < P_LIST_OBJECT[min(depth, MAX_DEPTH)]:
            listed = self._list(tags, depth)
            if listed is not None:
                return listed
        return self._noun_phrase(tags, depth)

    def _list(self, tags: frozenset[str], depth: int, *, subject: bool = False) -> _Phrase | None:
        """Three or four noun phrases: "the dogs, the cats and the birds" (no serial comma).

        The items share one of the slot's tags (they must all fit the verb) and are distinct
        nouns without prepositional phrases or relative clauses, so that every comma of the
        list separates items.  A list is plural; a subject list may end in "and I" (first
        person: "my brother, my sister and I are").  None if no tag of ``tags`` has enough
        nouns for a list.
        """
        rng = self._rng
        categories = [tag for tag in sorted(tags) if len(self._nouns(_tags(tag))) >= 4]
        if not categories:
            return None
        category = _tags(categories[int(rng.random() * len(categories))])
        size = 4 if rng.random() < P_FOURTH_ITEM else 3
        with_i = subject and "person" in category and rng.random() < P_LIST_WITH_I
        nouns = rng.sample(self._nouns(category), size - with_i)
        items = [self._noun_phrase(category, depth + 1, noun=noun, simple=True) for noun in nouns]
        if with_i:
            items.append(_Phrase(["I"], 1, False, _tags("person")))
        words: list[str] = []
        for item in items[:-2]:
            words += [*item.words, ","]
        words += [*items[-2].words, "and", *items[-1].words]
        common = frozenset.intersection(*(item.tags for item in items))
        return _Phrase(words, 1 if with_i else 3, True, common)

    @staticmethod
    def _object_wh(
        phrase: _Phrase, residue: tuple[str, ...]
    ) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
        word = "who" if "person" in phrase.tags else "what"
        if phrase.head:
            return (((word,), residue), (("which", phrase.head), residue))
        return (((word,), residue),)

    def _noun_phrase(
        self,
        tags: frozenset[str],
        depth: int,
        *,
        indefinite: bool = False,
        ground: bool = False,
        avoid: str = "",
        noun: _Noun | None = None,
        simple: bool = False,
        nonrestrictive: bool = True,
    ) -> _Phrase:
        """A noun phrase whose head shares a tag with ``tags`` (or is ``noun``).

        ``simple`` leaves out prepositional phrases and relative clauses (list items);
        ``nonrestrictive`` False leaves out non-restrictive ones.
        """
        rng = self._rng
        d = min(depth, MAX_DEPTH)
        if noun is None:
            nouns = self._nouns(tags)
            noun = nouns[int(rng.random() * len(nouns))]
            if noun.singular == avoid:
                noun = nouns[int(rng.random() * len(nouns))]
        plural = bool(noun.plural) and rng.random() < (P_GROUND_PLURAL if ground else P_PLURAL)
        form = noun.plural if plural else noun.singular
        adjectives = self._adjectives(noun, depth)
        if not noun.plural:
            table = _W_INDEF_MASS if indefinite else _W_GROUND_MASS if ground else _W_MASS
        elif plural:
            table = _W_INDEF_PLURAL if indefinite else _W_GROUND_PLURAL if ground else _W_PLURAL
        else:
            table = _W_GROUND_SINGULAR if ground else _W_SINGULAR
        det = "a" if indefinite and noun.plural and not plural else table.pick(rng)
        if det == "a":
            det = _article((adjectives or [form])[0])
        words = [det, *adjectives, form] if det else [*adjectives, form]
        head = form if noun.plural else ""
        if simple:
            return _Phrase(words, 3, plural, noun.tags, head)
        with_pp = rng.random() < P_NOUN_PP[d]
        if with_pp:
            words += self._noun_pp(noun, depth + 1)
        if rng.random() < P_RELATIVE[d]:
            words += self._relative(noun, plural, depth + 1)
        elif (
            nonrestrictive and det in DEFINITE_DETERMINERS and not with_pp
            and rng.random() < P_NONRESTRICTIVE[d]
        ):
            # Only right after the head noun, so that the clause cannot be read as describing
            # the noun of a prepositional phrase; set off by commas on both sides, and
            # _punctuate drops the closing one where the sentence ends or a comma follows anyway.
            words += [",", *self._relative(noun, plural, depth + 1, nonrestrictive=True), ","]
        return _Phrase(words, 3, plural, noun.tags, head)

    def _adjectives(self, noun: _Noun, depth: int) -> list[str]:
        rng = self._rng
        d = min(depth, MAX_DEPTH)
        r = rng.random()
        if r >= P_ADJECTIVE[d]:
            return []
        candidates = self._adjectives_for(noun.tags)
        if not candidates:
            return []
        first = rng.choice(candidates)
        chosen = [first]
        if r < P_TWO_ADJECTIVES[d]:
            second = rng.choice(candidates)
            if second.rank != first.rank:
                chosen = sorted((first, second), key=lambda adj: adj.rank)
        words = [adj.word for adj in chosen]
        if chosen[0].gradable and rng.random() < P_VERY:
            words.insert(0, "very")
        return words

    def _noun_pp(self, noun: _Noun, depth: int) -> list[str]:
        rules = self._rules("noun", noun.tags)
        if rules is None:
            return []
        rule = rules.pick(self._rng)
        # No non-restrictive clause on the ground: its closing comma would make the relative
        # clause of the host look non-restrictive too ("the cup on the table, which ...,
        # which I bought").
        ground = self._noun_phrase(
            rule.ground, depth, ground=True, avoid=noun.singular, nonrestrictive=False
        )
        return [rule.prep, *ground.words]

    def _location(self, tags: frozenset[str], depth: int) -> list[str]:
        rng = self._rng
        if "person" in tags and rng.random() < 0.06:
            return ["at", "home"]
        rules = self._rules("location", tags)
        if rules is None:
            rules = self._rules("location", _tags("person"))
            assert rules is not None
        rule = rules.pick(rng)
        return [rule.prep, *self._noun_phrase(rule.ground, depth, ground=True).words]

    def _goal(self, frame: _Frame, depth: int) -> _Slot:
        rng = self._rng
        r = rng.random()
        if r < 0.12:
            words = ["home"]
        elif r < 0.8:
            words = ["to", *self._noun_phrase(_tags("goal"), depth + 1, ground=True).words]
        elif r < 0.9 and frame.verb in INTO_VERBS:
            goal = self._noun_phrase(_tags("room building"), depth + 1, ground=True)
            words = ["into", *goal.words]
        else:
            words = ["across", *self._noun_phrase(_tags("across"), depth + 1, ground=True).words]
        return _Slot(words, ((("where",), ()),))

    def _relative(
        self, noun: _Noun, plural: bool, depth: int, *, nonrestrictive: bool = False
    ) -> list[str]:
        """A relative clause on ``noun``; a non-restrictive one takes "who" or "which", never
        "that"."""
        rng = self._rng
        if nonrestrictive:
            pronoun = "who" if "person" in noun.tags else "which"
        elif "person" in noun.tags:
            pronoun = "who" if rng.random() < 0.65 else "that"
        else:
            pronoun = "which" if rng.random() < 0.5 else "that"
        time = _W_TIMES.pick(rng)
        head = _Phrase([], 3, plural, noun.tags)
        r = rng.random()
        if r < 0.45:
            frames = [f for k in _RELATIVE_SUBJECT_KINDS for f in self._frames(k, noun.tags)]
            if frames:
                frame = frames[int(rng.random() * len(frames))]
                clause = self._build(frame, time, depth, subject=head, neg_p=0.08)
                return [pronoun, *_predicate(clause)]
        elif r < 0.8:
            frames = [
                f for k in _RELATIVE_OBJECT_KINDS for f in self._frames(k, noun.tags, "object")
            ]
            if frames:
                frame = frames[int(rng.random() * len(frames))]
                gap = _Phrase([], 3, plural, noun.tags)
                clause = self._build(frame, time, depth, obj=gap, neg_p=0.05)
                return [pronoun, *_declarative(clause)]
        clause = self._copula(time, depth, subject=head, neg_p=0.05)
        return [pronoun, *_predicate(clause)]


# --------------------------------------------------------------------------------------------
# Vocabulary and batch generation.
# --------------------------------------------------------------------------------------------


def _collect_vocabulary() -> frozenset[str]:
    words: set[str] = set(FUNCTION_WORDS)
    for noun in NOUNS:
        words.add(noun.singular)
        if noun.plural:
            words.add(noun.plural)
    words.update(adj.word for adj in ADJECTIVE_ENTRIES)
    words.update(WEATHER_ADJECTIVES)
    progressive: set[str] = set(WEATHER_VERBS) | set(EVENT_VERBS)
    for frames in FRAMES.values():
        progressive.update(frame.verb for frame in frames if not frame.stative)
    for verb, forms in VERB_FORMS.items():
        words.update((forms.base, forms.third, forms.past, forms.participle))
        if verb in progressive:
            words.add(forms.ing)
    words.update(word.lower() for word, *_ in SUBJECT_PRONOUNS)
    words.update(word for word, *_ in OBJECT_PRONOUNS)
    for table in (
        SINGULAR_DETERMINERS, PLURAL_DETERMINERS, MASS_DETERMINERS,
        INDEFINITE_PLURAL_DETERMINERS, SUBORDINATORS,
    ):
        words.update(word for word, _ in table if word)
    words.update(rule.prep for rule, _ in _NOUN_PP_RULES + _LOCATION_RULES)
    words.update(frame.prep for frames in FRAMES.values() for frame in frames if frame.prep)
    words.update(word for phrase in TRANSPORT for word in phrase)
    words.update(MANNER_ADVERBS)
    for phrases in TIME_ADVERBIALS.values():
        words.update(word for phrase in phrases for word in phrase.split())
    for adverbs in (*PRE_ADVERBS.values(), *COPULA_ADVERBS.values()):
        words.update(adverbs)
    for phrase in (
        *(marker for marker, *_ in DISCOURSE_MARKERS), *(marker for marker, _ in QUESTION_MARKERS),
        *(vocative for vocative, _ in VOCATIVES),
    ):
        words.update(phrase.split())
    return frozenset(words)


VOCABULARY: frozenset[str] = _collect_vocabulary()


def generate(n: int, seed: int, exclude: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """``n`` distinct sentences from ``Grammar(seed)``, none of them in ``exclude``."""
    grammar = Grammar(seed)
    seen: set[str] = set()
    sentences: list[str] = []
    attempts = 0
    limit = 50 * n + 1000
    while len(sentences) < n:
        if attempts >= limit:
            raise RuntimeError(f"could not draw {n} distinct sentences in {limit} attempts")
        attempts += 1
        sentence = grammar.sentence()
        if sentence not in seen and sentence not in exclude:
            seen.add(sentence)
            sentences.append(sentence)
    return sentences
