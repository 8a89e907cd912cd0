"""edit-skf.py IN OUT CODE: the .skf file IN written as OUT, its armature.json changed by CODE
(Python statements on j, the parsed JSON) and every other member copied as it is. The shell
tests' one way to make a variant of a sample."""
import json
import sys
import zipfile

src, dst, code = sys.argv[1:4]
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
    for item in zin.infolist():
        data = zin.read(item.filename)
        if item.filename == "armature.json":
            j = json.loads(data)
            exec(code, {"j": j})
            data = json.dumps(j).encode()
        zout.writestr(item, data)
