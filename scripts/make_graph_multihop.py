"""Build data/graph_multihop/: an entity-dense two-hop question set over linked Chinese Wikipedia passages.

Source: the cmrc2018_dev passages in ../shared/eval (Chinese Wikipedia, CC BY-SA 4.0; ymcui/cmrc2018 @ c0eb1b6).
Pairs were found by machine (passage A's text names passage B's title); each question below was then written
by hand for this project on 2026-12-02: it names A's entity and asks for a fact that only B states, reaching
B through how A relates to it, without naming B. `facts` are the answer strings; the last group is in B's
text and not in A's (checked here, the build fails otherwise). The corpus is every gold passage plus 30
other cmrc2018_dev passages chosen by sha1("20261202:" + id), as distractors.
    python scripts/make_graph_multihop.py     (writes corpus.jsonl, queries.jsonl, meta.json)
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT.parent / "shared" / "eval" / "cmrc2018_dev" / "corpus.jsonl"
OUT = ROOT / "data" / "graph_multihop"
DISTRACTORS = 30
SEED = "20261202"

# (question, first-hop passage A, second-hop passage B, facts)
QUESTIONS = [
    ("大莱龙铁路是哪条铁路干线的组成部分？那条干线全长多少公里？", "DEV_3", "DEV_17", [["德龙烟铁路"], ["548"]]),
    ("大莱龙铁路东边与之相连的那条铁路，正线全长多少公里？", "DEV_3", "DEV_18", [["112.7"]]),
    ("河茂铁路在茂名西站与哪条铁路相接？那条铁路全长多少公里？", "DEV_38", "DEV_2", [["广茂铁路"], ["364.6"]]),
    ("杭海城际铁路从海宁西站连往杭州的那个车站，位于哪个街道？", "DEV_53", "DEV_54", [["南苑街道"]]),
    ("大沙东站在 2003 年规划时原本叫什么名字？现在用这个名字的车站设有几个出入口？", "DEV_63", "DEV_64", [["大沙地站"], ["两个"]]),
    ("新角龙类包含的、其下又有纤角龙科和原角龙科的那个演化支，生存于哪个时期？", "DEV_66", "DEV_68", [["冠饰角龙类"], ["白垩纪晚期"]]),
    ("冠饰角龙类与阎王角龙、古角龙等物种一起组成的演化支，学名是什么？", "DEV_68", "DEV_66", [["Neoceratopsia"]]),
    ("鑫诺一号通信卫星服务的那家公司成立于哪一天？", "DEV_69", "DEV_82", [["1994年5月30日"]]),
    ("鑫诺二号通信卫星的制造单位成立于哪一年？现任院长是谁？", "DEV_77", "DEV_99", [["1968"], ["杨保华"]]),
    ("鑫诺卫星通信公司那颗因太阳帆板未能二次展开而无法工作的卫星，制作成本是多少？", "DEV_82", "DEV_77", [["20亿"]]),
    ("阿瓦隆尼亚大陆形成于哪个大陆边缘的隐没带？那个大陆存在于什么地质年代？", "DEV_93", "DEV_120", [["原冈瓦那大陆"], ["中元古代"]]),
    ("西湾河电车厂在 1980 年代末接收了从哪座电车厂迁来的设施？那座电车厂的原址后来成为什么？", "DEV_148", "DEV_111", [["铜锣湾电车厂"], ["时代广场"]]),
    ("扬子克拉通一文中，华南陆块连接的那个北方陆块，英文名是什么？", "DEV_154", "DEV_159", [["North China craton"]]),
    ("古汉越语的一些特征跟日本哪种汉字音相同？这种汉字音是从中国哪座城市传入日本的？", "DEV_175", "DEV_90", [["吴音"], ["建康"]]),
    ("月代这种发型的风俗一直持续到哪一道法令颁布？这道法令是哪一天发出的？", "DEV_184", "DEV_182", [["散发脱刀令"], ["1871年9月23日"]]),
    ("《无声狂啸》的作者是哪部剧集最初的创作者之一？他出生在哪座城市？", "DEV_200", "DEV_201", [["星际旅行"], ["克里夫兰"]]),
    ("哈兰·艾里森那部获雨果奖的短篇小说，最初发表在哪一期刊物上？", "DEV_201", "DEV_200", [["3月刊"]]),
    ("与胴丸并称室町时代前后日本主要铠甲的另一种盔甲，出现在什么时代？", "DEV_224", "DEV_228", [["镰仓时代后期"]]),
    ("朱翊镠获得的封地原是哪位王的？那位王就藩于哪个府？", "DEV_275", "DEV_278", [["朱载圳", "景王"], ["德安府"]]),
    ("景王府在汉阳收柴火税时坚持反对的吴宗周，担任的那种官职最早是哪些官的属官？", "DEV_278", "DEV_1107", [["节度使"]]),
    ("威尔特郡西边相邻的那个郡，最大的城市是哪座？", "DEV_288", "DEV_316", [["巴斯"]]),
    ("马赛获得季军的那届选美活动在哪一天、在什么地方举行？", "DEV_302", "DEV_528", [["2008年7月19日"], ["香港会议展览中心"]]),
    ("皱眉肌上方、位于前额的那块肌肉呈什么形状？", "DEV_321", "DEV_322", [["四边形"]]),
    ("鲍比·霍顿 1998 年接替谁成为中国国家足球队主教练？这位前任是哪里人？", "DEV_326", "DEV_451", [["戚务生"], ["威海"]]),
    ("李婉华主持节目的那家电台，主要用哪些语言广播？", "DEV_1057", "DEV_369", [["粤语"]]),
    ("柴郡东南方向相邻的郡，哪个国家公园横跨它的东北部？", "DEV_379", "DEV_384", [["皮克区", "Peak district"]]),
    ("斯塔福德郡南边相邻的郡，以人口计算第一大城市是哪座？", "DEV_384", "DEV_421", [["伯明翰"]]),
    ("鬣齿兽属所在的那个科，于哪个时期出现？", "DEV_405", "DEV_409", [["古新世晚期"]]),
    ("梁卓伟 2011 年接替谁出任特首办主任？那个人后来担任哪个局的局长？", "DEV_406", "DEV_403", [["谭志源"], ["政制及内地事务局"]]),
    ("诺丁汉郡东北、东边相邻的那个郡，英文简称是什么？", "DEV_412", "DEV_1103", [["Lincs"]]),
    ("梁诚在一场棒球比赛中对阵的那所学院，是一所什么样的学校？位于美国哪个州？", "DEV_458", "DEV_460", [["寄宿中学"], ["新罕布什尔"]]),
    ("尖吻灵猫的那个同属食蚁狸亚科的近亲，还有哪些别名？", "DEV_466", "DEV_471", [["马尔加什灵猫", "马岛麝猫", "马岛缟狸"]]),
    ("斯里兰卡人浸泡椰子猫肉所用的油，来自哪种植物？这种植物可能原产于哪里？", "DEV_473", "DEV_1065", [["亚麻"], ["西亚"]]),
    ("安贞门站的预留轨道没有启用，乘客改在哪个站换乘？那个站是地下几层的车站？", "DEV_510", "DEV_505", [["北土城站"], ["三层"]]),
    ("汉普郡的雅芳河发源于哪个郡？那个郡的郡治在哪个镇？", "DEV_519", "DEV_288", [["威尔特郡"], ["特罗布里奇"]]),
    ("2008年度香港小姐竞选的冠军，籍贯是哪里？", "DEV_528", "DEV_298", [["汕头"]]),
    ("利东邨道是香港鸭脷洲岛上哪座山出外的必经之路？这座山高多少米？", "DEV_569", "DEV_415", [["玉桂山"], ["196"]]),
    ("吕理政交棒时负责监交的文建会副主任委员，后来任哪个县政府的文化处处长？", "DEV_636", "DEV_639", [["屏东"]]),
    ("按基本公正原则一文，20 世纪 60 年代后法院逐渐迈向的那个原则，是透过美国宪法第几修正案实现的？", "DEV_1150", "DEV_1094", [["第十四修正案"]]),
    ("莱姆里杰斯的悬崖和海滩所属的那处世界遗产，总长多少千米？", "DEV_1542", "DEV_1536", [["153"]]),
    ("肉垂冠雉较为接近的那种鸣冠雉，分布在巴西东南部的哪片森林？", "DEV_1081", "DEV_1077", [["大西洋森林"]]),
    ("大莱龙铁路东端相连的那条铁路，项目工程投资总额约为多少？", "DEV_3", "DEV_18", [["28亿"]]),
]


def main() -> int:
    by_id = {}
    for line in SOURCE.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        by_id[rec["id"]] = rec
    gold = list(dict.fromkeys(p for _, a, b, _ in QUESTIONS for p in (a, b)))
    for q, a, b, facts in QUESTIONS:
        last = facts[-1]
        if not any(f in by_id[b]["text"] for f in last) or any(f in by_id[a]["text"] for f in last):
            print(f"error: the last facts of {q!r} must be in {b}'s text and not in {a}'s", file=sys.stderr)
            return 1
        if by_id[b]["title"] in q:
            print(f"error: {q!r} names its second hop ({by_id[b]['title']})", file=sys.stderr)
            return 1
    others = sorted((i for i in by_id if i not in gold and by_id[i]["title"]),
                    key=lambda i: hashlib.sha1(f"{SEED}:{i}".encode()).hexdigest())[:DISTRACTORS]
    OUT.mkdir(parents=True, exist_ok=True)
    ids = sorted(gold + others, key=lambda i: int(i.split("_")[1]))
    with (OUT / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for i in ids:
            f.write(json.dumps({"id": i, "title": by_id[i]["title"], "text": by_id[i]["text"]}, ensure_ascii=False) + "\n")
    with (OUT / "queries.jsonl").open("w", encoding="utf-8") as f:
        for n, (q, a, b, facts) in enumerate(QUESTIONS, 1):
            f.write(json.dumps({"id": f"g{n:02d}", "query": q, "gold_ids": [a, b], "answerable": True, "facts": facts,
                                "hops": [a, b], "type": "bridge"}, ensure_ascii=False) + "\n")
    meta = {"source": "ymcui/cmrc2018 squad-style-data/cmrc2018_dev.json @ c0eb1b6 via ../shared/eval/cmrc2018_dev",
            "licence": "CC BY-SA 4.0 (passages); the questions were written for this project",
            "written": "2026-12-02", "questions": len(QUESTIONS), "passages": len(ids), "gold_passages": len(gold),
            "distractors": len(others), "distractor_seed": SEED}
    (OUT / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"{len(QUESTIONS)} questions, {len(ids)} passages ({len(gold)} gold, {len(others)} distractors)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
