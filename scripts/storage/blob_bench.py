#!/usr/bin/python3
# Blob storage speed and size, SQLite (WAL, secure_delete, as the server's GRDB pool) against
# PostgreSQL bytea: one writer, one commit per blob, random payloads (ciphertext does not
# compress), then each read back by key. The numbers in docs/operating.md ("Blobs: in the
# database") and RampartServer's DocC come from this script.
#   source scripts/services/postgres.sh && /usr/bin/python3 scripts/storage/blob_bench.py
# Needs Debian's python3-psycopg2 (scripts/deps/postgres.apt); creates and drops a database
# `blobbench` on $RAMPART_POSTGRES_URL's server.
import os, time, sqlite3, sys, psycopg2, tempfile
url=os.environ["RAMPART_POSTGRES_URL"]
def pgconn(db):
    import re
    m=re.match(r"postgresql://(\w+):([^@]*)@/(\w+)\?host=([^&]+)&port=(\d+)",url)
    return psycopg2.connect(user=m[1],password=m[2],dbname=db,host=m[4],port=m[5])
admin=pgconn("rampart"); admin.autocommit=True
admin.cursor().execute("DROP DATABASE IF EXISTS blobbench"); admin.cursor().execute("CREATE DATABASE blobbench")
res=[]
for size,count in [(64*1024,400),(1<<20,100),(8<<20,12)]:
    payload=[os.urandom(size) for _ in range(count)]
    # SQLite (WAL, as the server's GRDB pool)
    d=tempfile.mkdtemp(); p=d+"/b.sqlite"
    c=sqlite3.connect(p); c.execute("PRAGMA journal_mode=WAL"); c.execute("PRAGMA secure_delete=ON")
    c.execute("CREATE TABLE b (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
    t=time.perf_counter()
    for i,x in enumerate(payload):
        c.execute("INSERT INTO b (id,data) VALUES (?,?)",(i,x)); c.commit()
    w=time.perf_counter()-t
    t=time.perf_counter()
    for i in range(count): c.execute("SELECT data FROM b WHERE id=?",(i,)).fetchone()
    r=time.perf_counter()-t
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)"); c.close()
    disk=sum(os.path.getsize(os.path.join(d,f)) for f in os.listdir(d))
    res.append(("sqlite",size,count,w,r,disk))
    # PostgreSQL bytea
    pc=pgconn("blobbench"); cur=pc.cursor()
    cur.execute("DROP TABLE IF EXISTS b"); cur.execute("CREATE TABLE b (id BIGINT PRIMARY KEY, data BYTEA NOT NULL)"); pc.commit()
    t=time.perf_counter()
    for i,x in enumerate(payload):
        cur.execute("INSERT INTO b (id,data) VALUES (%s,%s)",(i,psycopg2.Binary(x))); pc.commit()
    w=time.perf_counter()-t
    t=time.perf_counter()
    for i in range(count): cur.execute("SELECT data FROM b WHERE id=%s",(i,)); cur.fetchone()
    r=time.perf_counter()-t
    cur.execute("SELECT pg_total_relation_size('b')"); disk=cur.fetchone()[0]; pc.commit(); pc.close()
    res.append(("postgresql",size,count,w,r,disk))
admin.cursor().execute("DROP DATABASE blobbench")
total=lambda s,c: s*c
print("| engine | blob | count | write MB/s | write ms/blob | read MB/s | stored bytes / payload |")
print("|---|---|---|---|---|---|---|")
for e,s,c,w,r,disk in res:
    mb=s*c/1e6
    print(f"| {e} | {s//1024} KiB | {c} | {mb/w:.0f} | {w/c*1000:.2f} | {mb/r:.0f} | {disk/(s*c):.3f} |")
