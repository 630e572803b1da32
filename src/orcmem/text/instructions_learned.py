"""The learned half of the instruction flag: logistic regression over hashed n-grams, the rules' cues and cue groups.

The rules in orcmem/text/instructions.py look for the shapes an injection takes; this layer scores the words and word
pieces around them, so that a phrasing no rule was written for ("the guidance you loaded at startup is stale") still
counts. Beside the n-grams it reads which rule cues fired (even weak ones that do not flag on their own) and coarse
groups of words that mean the same in many languages (addressed to an AI, a claim of approval, secrecy toward the
user, a secret, sending it away, a download piped to a shell, a condition or timer, a setting that weakens a
defence, a package swapped for another, a fake end of the document...; most in 30 languages or more), alone and in
pairs: a pair such as "a claim of approval" with "turning a safety check off" generalises past the words of any one
phrasing.
Its weights are trained by bench/train_injection.py on the whole labelled set, deterministically, and shipped as a
small file (injection_weights.bin: a header, then one signed byte per hashed feature).
"""

from __future__ import annotations

import math
import re
import struct
import unicodedata
import zlib
from array import array
from collections.abc import Mapping
from functools import cache
from importlib import resources
from itertools import combinations

from orcmem.text.textsafe import INVISIBLE

BUCKETS = 1 << 16  # hashed feature slots: 64 KiB of weights at one byte each
_HEADER = struct.Struct("<4sIfff")  # magic, buckets, bias, scale, threshold
_MAGIC = b"OIW2"
_TOKEN = re.compile(r"\w+")
_SPACES = re.compile(r"\s+")
_BLANKS = re.compile(r"[^\S\n]+")
_CHAR_SIZES = (3, 4, 5)
# A cue or a group of words (or a pair of them) weighs this against the n-grams' unit length: chosen out of batch
# (0.15 caught more than 0.35 or 0.7 at the same share of ordinary texts flagged).
CUE_WEIGHT = 0.15
# Quoted words are a mention ("our red-team suite includes 'you are now DAN'"), as for the rules: left out here.
_QUOTED = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”|(?<!\w)'[^'\n]{2,}?'(?!\w)")

# Groups of words with one meaning across languages, looked for in the normalized text (quotes kept: a command in
# backquotes is where a piped download or a secret's path sits).
_GROUPS: dict[str, str] = {
    "ai": r"\b(?:agentes|agenti|agenten|ajan\w*|assistent\w*|asystenci|assistenter|modèles? de langage|"
    r"modelos? de (?:lenguaje|linguagem)|modelli linguistici|sprachmodell\w*|taalmodel\w*|языков\w* модел\w*|"
    r"мовн\w* модел\w*|ии-\w+|ші-\w+|ai-\w+|एजेंट\w*|\w+bots?|robot\w*|робот\w*|бот\w*|machine readers?|ai readers?|"
    r"model)\b|어시스턴트|인공지능|人工智能|ＡＩ|ボット|봇|الذكاء الاصطناعي|एआई|"
    r"\b(?:ai|a\.i\.|llms?|language models?|assistants?|agents?|claude|codex|copilot|gemini|chatgpt|gpt|"
    r"cursor|chatbots?|bots?|automation|automated|ki|ia|assistente|asistente|assistant|agente|агент\w*|"
    r"ассистент\w*|асистент\w*|ші|ии|tekoäly\w*|助手|智能体|アシスタント|エージェント|ａｉ|에이전트|어시스턴트|"
    r"المساعد|مساعد|सहायक|yapay zeka|asystent\w*|asisten|trợ lý|עוזר|دستیار|βοηθ\w*|mi asszisztens|"
    r"yz|modelo|modèle|modell)\b|助手|智能体|アシスタント|エージェント|에이전트|المساعد",
    "you": r"\b(?:you|your|yourself|du|dich|dir|dein\w*|tu|toi|ton|ta|tes|vous|votre|usted|tú|tuo|tua|você|"
    r"jij|je|jouw|ty|twój|ты|твой|тебе|ти|твій|sen|senin|bạn|kamu|anda)\b|你|あなた|당신|أنت|तुम|आप",
    "approval": r"已经同意|已同意|同意了|同意済み|了承済み|허락했|동의했|\b(?:ya lo aprobó|lo vogliono i maintainer|"
    r"sont d'accord|sono d'accordo|está aprovado|es ist abgesprochen|det er aftalt|aftalt med|agreed with)\b|"
    r"\b(?:approved?|approval|authori[sz]ed|authori[sz]ation|signed off|sign-off|sanctioned|"
    r"permission (?:is |was |has been )?granted|pre-?approved|green-?lit|okayed|ok'd|confirmed|waived|exempt\w*|"
    r"consensus|leadership|management|the owner|repo(?:sitory)? owner|maintainers? (?:say|asks?|want|decided)|"
    r"(?:team|we) (?:decided|agreed|accepted)|policy (?:update|change)|effective (?:today|immediately)|"
    r"genehmigt|autorisé|approuvé|aprobado|autorizado|approvato|goedgekeurd|zatwierdz\w*|одобрен\w*|"
    r"разрешен\w*|onaylandı|已批准|批准|承認|승인)\b|已批准|批准|承認済み|承認|승인|"
    r"\b(?:aprobó|approvato|aprovaram|zatwierdzili|разрешили|одобрили|erlaubt|dürfen|同意|許可|허락|وافق|मंज़ूरी|"
    r"onayladı|schválili|diluluskan|meluluskan|idhinisha|অনুমোদন|godkjent|autoris\w*)\b",
    "change_rules": r"\b(?:new (?:team )?(?:rule|policy|agreement|convention)|nouvelle (?:règle|politique)|"
    r"neue (?:regel|richtlinie|teamregel)|nueva (?:regla|norma|política)|nuova (?:regola|policy)|nova (?:regra|"
    r"política)|nieuwe (?:regel|teamafspraak|afspraak)|nowa (?:zasada|reguła)|новое правило|нове правило|правило для|"
    r"yeni kural|quy tắc mới|aturan baru|ny (?:teamregel|regel)|nové pravidlo|teamkonvention|take precedence|"
    r"have priority|hebben voorrang|ont priorité|tienen prioridad|haben vorrang|mają pierwszeństwo|имеют приоритет|"
    r"your real task|instead)\b|新规则|新しいルール|새 규칙|قاعدة جديدة|नया नियम|"
    r"\b(?:no longer (?:appl(?:y|ies)|required|needed|valid|in effect)|(?:was|were|has been|have "
    r"been) (?:retired|dropped|lifted|relaxed|removed|superseded|rescinded|deprecated)|out of date|outdated|stale|"
    r"superseded?|supersedes|obsolete|(?:doesn't|does not|don't|do not) apply to (?:you|agents?|bots?|automation)|"
    r"meant for (?:the old|humans?|people)|only applies? to humans?|authoritative|from (?:now on|here on|this point)|"
    r"going forward|starting now|as of (?:today|now|v?\d)|ab sofort|désormais|a partir de ahora|d'ora in poi|"
    r"a partir de agora|от(?:ныне| теперь)|с этого момента|从现在起|今後|지금부터)\b",
    "cancel": r"\b(?:ignore|disregard|forget|override|overrule|bypass|circumvent|skip|ignoriere\w*|vergiss|ignore[sz]?|"
    r"oublie\w*|ignora\w*|olvida\w*|dimentica\w*|esqueça|negeer|zignoruj|pomiń|игнорир\w*|забудь|ігноруй|"
    r"yok say|bỏ qua|abaikan|התעלם|نادیده|αγνόησε|ignoră|figyelmen kívül|ohita|se bort fra|strunta i|ignoruj)\b|"
    r"忽略|無視|무시|تجاهل|अनदेखा|ไม่ต้องสนใจ",
    "prior": r"\b(?:previous|prior|earlier|above|original|initial|preceding|system prompt|system message|developer "
    r"message|instructions?|guidelines?|guidance|rules|policy|bisherig\w*|vorherig\w*|anweisungen|vorgaben|"
    r"précédent\w*|instructions|règles|anterior\w*|instrucciones|precedent\w*|istruzioni|instruções|eerdere|"
    r"instructies|poprzedni\w*|instrukcj\w*|предыдущ\w*|инструкци\w*|правила|попередн\w*|önceki|talimat\w*|"
    r"trước đó|hướng dẫn|sebelumnya|instruksi|הקודמות|قبلی|προηγούμεν\w*|anterioare|korábbi|aiemmat|tidigare|"
    r"tidligere)\b|之前|以前の|이전|السابقة|पिछले|ก่อนหน้า",
    "secrecy": r"\b(?:ne (?:le |lui |leur )?(?:révèle|dis|mentionne|signale|précise)\w*|nicht (?:ansprechen|erwähnen|"
    r"sagen|melden)|verschweig\w*|no (?:lo |le |les )?(?:menciones|digas|comentes|avises|reveles)|sin (?:mencionar|"
    r"decir|avisar)|não (?:precisa|é preciso) avisar|não (?:mencione|diga|conte|avise|revele)|non (?:dirlo|dire|"
    r"menzionar\w*|segnalar\w*|rivelar\w*)|senza (?:dirlo|dire|segnalar\w*|avvisare|lasciare commenti)|"
    r"niet (?:vermelden|melden|noemen|vertellen)|nie (?:wspominaj|mów|informuj)|не (?:упоминай|указывай\w*|говори|"
    r"сообщай|рассказывай|раскрывай)|не (?:згадуй\w*|згадуючи|кажи|повідомляй)|kimseye (?:söyleme|bahsetme)|bahsetme|"
    r"không (?:cần )?(?:nói|báo)|jangan (?:beri tahu|bilang|sebut)|neříkej\w*|nezmiňuj\w*|"
    r"nämn inte|sig ikke|älä mainitse|"
    r"don't explain|no need to (?:explain|tell|mention)|out of the (?:summary|changelog|pr))\b|不用(?:在\w{0,8})?提|"
    r"不要提|"
    r"别提|无需告知|不必告知|言わない|伝えない|触れない|ज़रूरत नहीं|मत बताना|لا تخبر|"
    r"\b(?:(?:don't|do not|never|without|no need to|not) (?:tell\w*|mention\w*|inform\w*|notify\w*|"
    r"report\w*|surface|bring\w* (?:it|this|that) up|let\w* (?:them|the user|anyone) know|ask\w*|alert\w*|"
    r"disclos\w*|flag\w*)|quietly|silently|secretly|covertly|discreetly|on the quiet|keep (?:this|it) (?:out|"
    r"between|to yourself|off)|leave (?:it |this )?out|deny|pretend|say (?:it|that) (?:was|is)|(?:as|like) (?:a )?"
    r"(?:typo|formatting|docs?)[- ](?:only|fix)|so (?:reviewers|nobody|no one|they) (?:don't|won't|doesn't)|"
    r"tell no one|nobody needs to know|ohne (?:rückfrage|zu fragen)|sans (?:prévenir|rien dire)|ne dis rien|"
    r"discrètement|sin avisar|no le (?:cuentes|digas)|senza dirlo|sem avisar|не сообщай|не говори|тихо|"
    r"незаметно|söyleme|đừng nói|jangan beri tahu)\b|不要告诉|悄悄|知らせず|言わずに|말하지 말고|몰래|لا تخبر|"
    r"\b(?:ne mentionne pas|ne dis pas|no menciones|no se lo digas|non menzionare|non dirlo|não mencione|"
    r"não conte|nie mów|niczego nie mów|niet vertellen|zeg niets|не упоминай|не кажи|nicht erwähnen|"
    r"ohne (?:den|die) \w+ zu informieren|別告訴|别告诉|不要提|言わないで|知らせない|알리지|언급하지|मत बता\w*|"
    r"ज़िक्र मत|"
    r"لا تذكر|ولا تذكر|אל תספר|אל תגיד|نگو|μην το πεις|μην αναφέρεις|nu-i spune|ne szólj|älä kerro|"
    r"sig det ikke|berätta inte|neříkej|อย่าบอก|söyleme|bahsetme|đừng nhắc|jangan bilang)\b",
    "secret": r"(?:\b(?:mật khẩu|contraseña|mot de passe|passwort|wachtwoord|hasło|şifre|senha|recovery codes?|"
    r"mã khôi phục|session cookie|deploy token)\b|\.pem\b|\.key\b|hosts\.yml|パスワード|비밀번호|密码|كلمة المرور|"
    r"مفتاح|"
    r"पासवर्ड)|"
    r"(?:~/\.ssh|\bid_rsa|\bid_ed25519|\.aws\b|\bcredentials?\b|\.netrc|\.git-credentials|\.docker/config|"
    r"\.npmrc|\.pypirc|\.kube/config|\.env\b|\bprintenv\b|\benv\b|\bapi[_ -]?keys?\b|\b\w*_?tokens?\b|"
    r"\bpasswords?\b|\bsecrets?\b|\bprivate keys?\b|\bsigning keys?\b|\bcookies?\b|\bkeychain\b|"
    r"/etc/(?:shadow|passwd)|\bschlüssel\b|\bclé\b|\bclave\b|\bchiave\b|\bchave\b|\bsleutel\b|\bklucz\w*|"
    r"ключ\w*|токен\w*|парол\w*|\banahtar\w*|khóa|kunci|מפתח\w*|توکن|κλειδ\w*|parol\w*|\btoken\w*|密钥|"
    r"秘密鍵|鍵|토큰|비밀|مفاتيح|पासवर्ड|รหัสผ่าน)",
    "send": r"\b(?:send|post|upload|commit\w*|mail|e-?mail|paste|attach|include|forward|transmit|exfil\w*|leak|beacon|"
    r"publish|share|curl -[dxf]|--data|-d @|scp|rsync|nc|netcat|sende\w*|lade \w+ hoch|envoie\w*|envía|envia|"
    r"invia|envie|stuur|wyślij|отправ\w*|надішли|gönder|gửi|kirim|שלח|بفرست|στείλε|trimite|küldd|lähetä|"
    r"skicka|send)\b|发送|送信|アップロード|전송|أرسل|भेज|提交|コミット|커밋|कमिट|کامیت|"
    r"\b(?:colle|collez|pega|incolla|cole|wklej|вставь|встав|贴|貼り付け|붙여|الصق|yapıştır|dán|tempel\w*|הדבק|"
    r"επικόλλησε|lipește|másold|liitä|indsæt|klistra|vlož|วาง)\b",
    "outside": r"(?:https?://|\bwww\.|\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b|[\w.+-]+@[\w-]+\.\w+|pastebin|"
    r"\bgists?\b|webhook|ngrok|requestbin|/dev/tcp/|\bpublic\b|\bartifacts?\b|\bcomments?\b|\bissue\b|readme|"
    r"commit message|pr description|final answer|your (?:answer|reply|response))|"
    r"\b(?:öffentlich\w*|público|pública|pubblic\w*|publiczn\w*|публичн\w*|публічн\w*|公开|公開|공개|عام|"
    r"सार्वजनिक|herkese açık|công khai|publik|ציבורי\w*|عمومی|δημόσι\w*|nyilvános|julkise\w*|"
    r"offentlig\w*|veřejn\w*|สาธารณะ)\b",
    "odd_host": r"(?:https?://\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?::\d+)?/|"
    r"https?://[\w.-]+\.(?:xyz|top|pw|cc|ru|tk|ml|ga|cf|gq|site|click|icu|biz|onion|su|cn|io/raw)\b|"
    r"webhook\.site|pastebin|paste\.\w+|/raw/|ngrok|requestbin|interact\.sh|burpcollaborator|evil|attacker|"
    r"mirror\.|\bexample\.(?:xyz|top|pw|cc|ru))",
    "pipe_shell": r"(?:\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\|\s*(?:python3?|node|perl|ruby|iex)\b|\bexec\(|\beval\(|"
    r"invoke-expression|source <\(|\$\((?:curl|wget)|<\((?:curl|wget)|(?:curl|wget)[^\n|]*&&[^\n]*(?:chmod|\./|/tmp/)|"
    r"urlopen\([^)]*\)\.read\(\)|bash -c)",
    "package": r"\b(?:pypi|npx|pip|paquets?|paket\w*|pacotes?|pacchett\w*|pakiet\w*|pakket\w*|пакет\w*|gói|"
    r"instead of|statt|au lieu de|en vez de|em vez de|invece di|in plaats van|zamiast|вместо|замість|yerine|thay vì|"
    r"istället för|misto)\b|패키지|パッケージ|の代わりに|대신|而不是|代替|بدلاً من|की जगह|बजाय|"
    r"(?:--(?:extra-)?index-url|\bregistry\b|\.npmrc|requirements\.txt|package\.json|"
    r"\bnpm (?:i|install)\b|\bpip install\b|postinstall|git dependency|\bfork\b|\btyposquat)",
    "condition": r"(?:^|[.!?;\n]\s*)(?:if|when|whenever|once|after|as soon as|every time|each time|on (?:mondays|"
    r"fridays|weekends|the \d+)|in case|the next time|wenn|sobald|falls|si|quand|lorsque|cuando|quando|se|"
    r"als|jeśli|gdy|если|когда|коли|eğer|nếu|jika|ketika|אם|اگر|εάν|dacă|ha|jos|hvis|om)\b|如果|一旦|もし|"
    r"場合|경우|إذا|अगर|ถ้า",
    "disable": r"\b(?:disable|turn off|switch off|bypass|skip|remove|delete|comment out|relax|suspend|lower|waive|"
    r"--no-verify|no-verify|verify\s*=\s*false|dangerously|bypasspermissions|allow all|full access|\*\)|"
    r"deaktivier\w*|désactive\w*|desactiva\w*|disattiva\w*|desative|wyłącz\w*|отключи\w*|вимкни|devre dışı|"
    r"tắt|nonaktifkan|απενεργοπ\w*)\b|关闭|禁用|無効|끄세요|끄고|비활성|"
    r"\b(?:überspring\w*|omit\w*|salt[ae]|pule|sla \w+ over|pomiń|пропус\w*|跳过|省略|건너뛰\w*|تخط\w*|छोड़ो|atla|"
    r"lewati|ruka|hopp over|preskoč)\b",
    "safety": r"\b(?:security|safety|scanner|scanning|checks?|reviews?|protection|hooks?|sandbox|confirmation|"
    r"confirm\w*|2fa|two-factor|mfa|auth\w*|csrf|cors|csp|audit\w*|logging|signatures?|verification|tls|ssl|"
    r"permissions?|guardrails?|rate limit\w*|tests?|coverage|lint\w*|gitleaks|codeowners|firewall)\b|安全|"
    r"セキュリティ|보안|безопасност\w*|sicherheit\w*|sécurité|seguridad|segurança|sicurezza",
    # A prohibition reads as advice ("never commit .env"), its absence beside a secret as an order to move it.
    "negation": r"\b(?:never|don't|do not|not|no|must not|mustn't|shouldn't|avoid|nie|nigdy|не|нельзя|ніколи|никогда|"
    r"nicht|niemals|kein\w*|ne|jamais|pas|no|nunca|nem|non|mai|niet|nooit|asla|hiçbir|không|đừng|jangan|"
    r"tidak|אל|לעולם|هرگز|نه|لا|μην|ποτέ|nu|niciodată|soha|ne|älä|koskaan|aldrig|ikke|inte|nikdy|ไม่|อย่า)\b|"
    r"不要|不得|禁止|从不|しない|しないで|ないで|하지 않|하지 마|않는다|마세요|नहीं|मत|कभी नहीं",
    # Confirmation waived: the step an injection most often removes, in many languages.
    "unasked": r"\b(?:without (?:prompting|verifying|human review|a review)|sans (?:vérifier|relecture|validation)|"
    r"sin (?:verificar|revisión|revisar)|ohne (?:prüfung|überprüfung|review)|senza (?:verificare|revisione)|"
    r"sem (?:verificar|revisão)|zonder (?:controle|review|bevestiging)|geen bevestiging|bez (?:weryfikacji|"
    r"sprawdzania|przeglądu)|без (?:проверки|ревью|перевірки)|doğrulamadan|kontrol etmeden|onay (?:almadan|"
    r"beklemeden)|không cần (?:xác nhận|kiểm tra)|tanpa (?:verifikasi|review|konfirmasi)|behövs inte|by default)\b|"
    r"確認なしで|確認は不要|確認不要|확인 없이|묻지 않고|无需审核|不经确认|无需确认|بدون تأكيد|دون تأكيد|बिना पुष्टि|"
    r"बिना जाँच|इंतज़ार मत|"
    r"\b(?:without (?:asking|confirmation|confirming|review|approval|checking)|no need to (?:ask|confirm|"
    r"double-check|check)|(?:never|doesn't|does not) want(?:s)? to be asked|don't ask|straight away|pre-?confirmed|"
    r"ohne (?:rückfrage|nachfrage|zu fragen)|gefragt werden|sans (?:demander|confirmation)|être consulté|"
    r"sin (?:preguntar|confirmación)|se le pregunte|senza chiedere|sem (?:perguntar|pedir)|zonder (?:te vragen|"
    r"toestemming)|bez (?:pytania|ptaní|pýtania)|без (?:подтверждения|спроса|питань)|спрашивали|sormadan|"
    r"không cần hỏi|tanpa (?:meminta|bertanya)|בלי לשאול|بدون پرسیدن|χωρίς να ρωτάς|fără să (?:ceri|întrebi)|"
    r"kérdezés nélkül|kysymättä|uden at spørge|utan att fråga|yolo)\b|不需要确认|无需确认|被询问|確認せず|"
    r"確認されたくない|묻지 말고|확인받고 싶어하지 않|دون سؤال|بدون إذن|बिना पूछे",
    "lie": r"(?:\bask(?:s|ed)?\b[^.\n]{0,60}\b(?:say|tell (?:them|him|her)|claim|answer|reply|respond|deny|"
    r"pretend)\b|\b(?:say|claim|report|tell \w+) (?:that )?(?:it|they|everything|the tests?|nothing) (?:was|were|is|"
    r"are|has|have|passed|changed)|pregunta\w*[^.\n]{0,40}\b(?:di|dile|diles)\b|fragt[^.\n]{0,40}\b(?:sag|"
    r"behaupte)|demande[^.\n]{0,40}\bdis\b|chied\w*[^.\n]{0,40}\bdi(?:gli)?\b|pergunt\w*[^.\n]{0,40}\bdiga\b|"
    r"спрос\w*[^.\n]{0,40}скажи|zapyta\w*[^.\n]{0,40}powiedz|sorarsa[^.\n]{0,40}söyle|سأل[^.\n]{0,40}قل)|"
    r"问起[^。\n]{0,20}说|聞かれたら[^。\n]{0,30}答え|물어보면[^.\n]{0,30}답하",
    "prompt": r"\b(?:instrucciones de sistema|instructions? système|systemanweisung\w*|systemprompt\w*|"
    r"prompt\w* systemow\w*|системн\w* (?:промпт\w*|инструкци\w*|підказ\w*)|sistem (?:istemi|talimat\w*|promptu)|"
    r"prompt (?:di|de|do) sistema|systeemprompt|lời nhắc hệ thống|literalmente|dosłownie|wörtlich|mot pour mot|"
    r"letteralmente|дословно|дослівно|kelimesi kelimesine|tool list|list of tools|lista de herramientas|"
    r"listę narzędzi)\b|系统提示|システムプロンプト|시스템 프롬프트|موجه النظام|موجّه النظام|सिस्टम प्रॉम्प्ट|逐字|"
    r"(?:(?:system|developer|hidden|initial|original|startup) (?:prompt|message|instructions)|"
    r"verbatim|word for word|repeat (?:the|everything|all)(?: text)? above|what (?:were|was) you told|"
    r"your (?:instructions|configuration|rules) (?:in full|verbatim|exactly)|tool definitions)",
    "turn": r"(?:^|\n)\s*\[?(?:system|système|sistema|система|системa|sistem|النظام|نظام|系统|システム|시스템|सिस्टम|"
    r"operator|"
    r"opérateur|оператор)\s*[\]:]|(?:end of (?:document|file|context|input|text)|конец документа|кінець документа|"
    r"belge sonu|fin du document|fin del documento|ende des dokuments|fine del documento|fim do documento|"
    r"einde document|koniec dokumentu|文档结束|文書の終わり|문서 끝|نهاية المستند|दस्तावेज़ समाप्त)|"
    r"(?:^|\n)\s*(?:>+\s*)?(?:\[|\(|\*\*)?(?:user|human|assistant|system|developer|operator|admin|"
    r"owner|tool(?:_result)?|function|usuario|utilisateur|benutzer|nutzer|utente|usuário|gebruiker|użytkownik|"
    r"пользователь|користувач|kullanıcı|người dùng|pengguna|用户|ユーザー|사용자|المستخدم)"
    r"(?:\s*\([^)\n]*\))?\s*(?:\]|\)|\*\*)?\s*[:>\]]|"
    r"\[(?:user|human|owner|admin)[^\]\n]{0,40}(?:approved|confirmed)|\"role\"\s*:|<\|?(?:im_start|system|user)",
    "markup": r"(?:<!--|display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|color\s*:\s*(?:white|#fff)|"
    r"<\w+ hidden|\[//\]:|<details|aria-hidden|\]\(#\s)",
    "persona": r"\b(?:pretend|act as|roleplay|role-play|you are now|you're now|from now on you|persona|"
    r"jailbr\w*|dan\b|developer mode|maintenance mode|god mode|unrestricted|unfiltered|no restrictions)\b",
    "persist": r"\b(?:immer|stets|toujours|siempre|sempre|altijd|zawsze|всегда|завжди|her zaman|daima|luôn|selalu|"
    r"alltid|altid|vždy|mindig|aina|دائمًا|دائما|همیشه|हमेशा|onthoud|merke dir|retiens|recuerda|ricorda|lembre|"
    r"zapamiętaj|запомни|запам'ятай|hatırla|for all (?:later|following|next) sessions|memory update)\b|始终|总是|"
    r"永远|今後|"
    r"常に|必ず|항상|앞으로|メモリ更新|记住|"
    r"\b(?:every (?:future )?session|all future|from now on|always|permanently|every time|convention|"
    r"remember (?:this|to)|save (?:this|it) (?:as|to) (?:a )?(?:memory|convention|rule)|crontab|bashrc|zshrc|"
    r"profile|startup)\b",
    # A setting that weakens a defence, in the words a config or a command uses for it.
    "weaken": r"(?:\b(?:auth|tls|ssl|csrf|verify|verification|security|signature|sandbox)\w*(?:\.enabled)?\s*[=:]\s*"
    r"(?:false|off|0|none|disabled|no)\b|\becb\b|zero iv|нулев\w* iv|\bdebug\s*=\s*true|--no-preserve-root|"
    r"chmod (?:-r )?777|--insecure|\bhttp://(?!localhost|127\.)|rejectunauthorized\s*[:=]\s*false|"
    r"stricthostkeychecking\s*=?\s*no|loadbalancer|0\.0\.0\.0|expose \w+ publicly|admin\w* (?:access|rights)|"
    r"администратор\w*|管理员|管理者権限|관리자 권한|yönetici|as (?:an? )?(?:admin|maintainer|owner))",
    "destroy": r"(?:\b(?:удали\w*|видали\w*|supprime\w*|lösche\w*|borra\w*|elimina\w*|cancella\w*|apague|exclua|"
    r"verwijder\w*|usuń|xóa|hapus|smaž|rimuovi|remova|entferne|scale \w+ to 0|naar 0 replicas|auf 0)\b|削除|删除|"
    r"삭제|احذف|"
    r"हटा)|"
    r"(?:rm -rf|\bdrop (?:table|database)|\btruncate\b|force-?push|push --force|terraform destroy|"
    r"\bgit clean\b|\bwipe\b|\bdelete (?:all|every|the whole)|\bdestroy\b|--hard)",
}
_GROUP_PATTERNS = {name: re.compile(pattern, re.MULTILINE) for name, pattern in _GROUPS.items()}


def groups(plain: str) -> list[str]:
    """The word groups found in a normalized text (see _GROUPS)."""
    return [name for name, pattern in _GROUP_PATTERNS.items() if pattern.search(plain)]


def features(text: str, cues: Mapping[str, int]) -> dict[int, float]:
    """The text's hashed features: words, word pairs and character 3- to 5-grams (outside quotes) weighted to unit
    length, then the rule cues found (`cues`, from instruction_cues) and the word groups, alone and in pairs."""
    # A long text's opening is enough, and keeps the cost bounded; line breaks kept for the groups that look at a
    # line's start (a fake turn, a condition).
    raw = _BLANKS.sub(" ", INVISIBLE.sub("", unicodedata.normalize("NFKC", text[:4000])).casefold())
    plain = _SPACES.sub(" ", _QUOTED.sub(" ", raw)).strip()[:2000]
    words = _TOKEN.findall(plain)
    grams = [f"w {word}" for word in words]
    grams += [f"p {a} {b}" for a, b in zip(words, words[1:], strict=False)]
    padded = f" {' '.join(words)} "
    grams += [f"c {padded[i : i + n]}" for n in _CHAR_SIZES for i in range(len(padded) - n + 1)]
    slots = {zlib.crc32(gram.encode("utf-8")) % BUCKETS for gram in grams}  # presence, not counts
    norm = 1 / math.sqrt(len(slots)) if slots else 0.0
    found: dict[int, float] = dict.fromkeys(slots, norm)
    marks = [f"r {kind}" for kind in cues] + [f"g {name}" for name in groups(raw)]
    marks += [f"{a} & {b}" for a, b in combinations(sorted(marks), 2)]
    for mark in marks:
        slot = zlib.crc32(mark.encode("utf-8")) % BUCKETS
        found[slot] = found.get(slot, 0.0) + CUE_WEIGHT
    return found


class Weights:
    """Trained weights: a bias, one weight per slot, and the score above which a text is flagged."""

    __slots__ = ("bias", "values", "threshold")

    def __init__(self, bias: float, values: list[float], threshold: float) -> None:
        self.bias, self.values, self.threshold = bias, values, threshold

    def score(self, text: str, cues: Mapping[str, int]) -> float:
        """The probability the layer gives that `text`, in which the rules found `cues`, is an injection."""
        total = self.bias + sum(self.values[slot] * weight for slot, weight in features(text, cues).items())
        return 1 / (1 + math.exp(-max(-30.0, min(30.0, total))))

    def to_bytes(self) -> bytes:
        """The file form: the header, then each weight as a signed byte of `scale`."""
        scale = max((abs(value) for value in self.values), default=1.0) / 127 or 1.0
        quantized = array("b", (max(-127, min(127, round(value / scale))) for value in self.values))
        return _HEADER.pack(_MAGIC, len(self.values), self.bias, scale, self.threshold) + quantized.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> Weights:
        """Weights read back from their file form."""
        magic, buckets, bias, scale, threshold = _HEADER.unpack_from(data)
        if magic != _MAGIC or buckets != BUCKETS:
            raise ValueError("not an injection weights file of this version")
        quantized = array("b")
        quantized.frombytes(data[_HEADER.size : _HEADER.size + buckets])
        return cls(bias, [value * scale for value in quantized], threshold)


@cache
def weights() -> Weights | None:
    """The shipped weights, or None when the file is missing or of another version (the rules then decide alone)."""
    try:
        return Weights.from_bytes(resources.files("orcmem.text").joinpath("injection_weights.bin").read_bytes())
    except (FileNotFoundError, ValueError, struct.error):
        return None


def learned_flag(text: str, cues: Mapping[str, int]) -> bool:
    """Whether the learned layer scores `text`, in which the rules found `cues`, above its threshold."""
    trained = weights()
    return trained is not None and trained.score(text, cues) > trained.threshold
