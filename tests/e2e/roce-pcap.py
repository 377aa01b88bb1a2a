#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""What a capture of RoCE v2 (UDP port 4791) shows of the traffic class
and the service level, for tests/e2e/30-traffic-class.bats.

  roce-pcap.py FILE    one line per IPv4 RoCE v2 packet of the pcap FILE
      (Ethernet): "tos 0xTT from ADDR"; and for each RDMA CM connect
      request (a CM REQ MAD on QP1) also "req tc TC sl SL from ADDR", its
      primary path's traffic class and service level (IBA 12.6.5), which
      the accepting side's queue pair takes.  On untagged Ethernet the SL
      travels nowhere else.
"""
import struct
import sys

ETH, IP4, UDP, BTH, DETH = 14, 20, 8, 12, 8
UD_SEND_ONLY = 0x64
CM_CLASS, CM_REQ = 0x07, 0x0010


def packets(data):
    magic = struct.unpack_from("<I", data)[0]
    order = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    if struct.unpack_from(order + "I", data)[0] not in (0xa1b2c3d4,
                                                        0xa1b23c4d):
        sys.exit("not a pcap file")
    if struct.unpack_from(order + "I", data, 20)[0] != 1:
        sys.exit("not an Ethernet capture")
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack_from(order + "I", data, off + 8)[0]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def main():
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    for p in packets(data):
        if len(p) < ETH + IP4 + UDP + BTH or p[12:14] != b"\x08\x00":
            continue
        ip = p[ETH:]
        ihl = (ip[0] & 0xf) * 4
        if ip[9] != 17:
            continue
        src = ".".join(str(b) for b in ip[12:16])
        udp = ip[ihl:]
        if struct.unpack_from(">H", udp, 2)[0] != 4791:
            continue
        print("tos 0x%02x from %s" % (ip[1], src))
        bth = udp[UDP:]
        if bth[0] != UD_SEND_ONLY or len(bth) < BTH + DETH + 24 + 96:
            continue
        mad = bth[BTH + DETH:]
        if mad[1] != CM_CLASS or struct.unpack_from(">H", mad, 16)[0] != CM_REQ:
            continue
        req = mad[24:]
        print("req tc %d sl %d from %s" % (req[92], req[94] >> 4, src))


if __name__ == "__main__":
    main()
