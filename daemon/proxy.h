/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * proxy: haproxy's PROXY protocol header, which tells a target who the
 * real client is before the stream's first byte (versions 1 and 2, as
 * haproxy's proxy-protocol.txt specifies them).
 *
 * Pure formatting: no I/O, no allocation.
 */
#ifndef PROXY_H
#define PROXY_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* The longest header either version makes here (v2 with two Unix paths). */
#define PROXY_HDR_MAX	300

/**
 * proxy_header(version, src, dst, out, len):
 * Write the PROXY header of ${version} (1 or 2) for a stream from ${src}
 * (the client) to ${dst} (the address it connected to) into ${out}, which
 * has ${len} bytes.  TCP over IPv4 and IPv6 is said as such (an IPv4
 * address mapped into IPv6 as IPv4; two families mixed, both as IPv6);
 * Unix stream sockets as version 2's AF_UNIX (version 1 has none: it says
 * UNKNOWN); ${src} or ${dst} NULL, or any other family, as "UNKNOWN"
 * (version 1) or the LOCAL command (version 2), which a target takes as
 * "use the connection's own addresses".  Returns the header's length, or
 * -1 if ${version} is neither or ${len} is too small.
 */
ssize_t proxy_header(int version, const struct sockaddr *src,
    const struct sockaddr *dst, uint8_t *out, size_t len);

/**
 * proxy_origin(src, dst, o):
 * A stream's origin for an ORIGIN record: the client at ${src}, connected
 * to ${dst} (mixed or mapped families as proxy_header says them; a Unix
 * socket without its paths; anything else WIRE_FAM_UNSPEC).
 */
void proxy_origin(const struct sockaddr *src, const struct sockaddr *dst,
    struct wire_origin *o);

/**
 * proxy_header_origin(version, o, out, len):
 * proxy_header for the ends ${o} describes (NULL or WIRE_FAM_UNSPEC:
 * unknown; WIRE_FAM_UNIX: version 2's AF_UNIX with empty paths).
 */
ssize_t proxy_header_origin(int version, const struct wire_origin *o,
    uint8_t *out, size_t len);

/*
 * The PROXY v2 TLV that names the node a stream came from: the name its
 * identity has among the serving side's peers (rstreamd.conf(5)), 1 to
 * 64 bytes, in the range the PROXY protocol leaves to applications.
 */
#define PROXY_TLV_RSTREAM_PEER	0xE0

/**
 * proxy_add_peer(hdr, hlen, cap, peer):
 * Append to the version 2 header ${hdr} of ${hlen} bytes (in a buffer of
 * ${cap}) the PROXY_TLV_RSTREAM_PEER TLV naming ${peer}, and count it in
 * the header's length.  Returns the new length, or -1 if it does not
 * fit or ${hdr} is no version 2 header; NULL or empty ${peer}: ${hlen}.
 */
ssize_t proxy_add_peer(uint8_t *hdr, size_t hlen, size_t cap,
    const char *peer);

/**
 * proxy_origin_text(o, buf, len):
 * The client ${o} names, as addr_text writes an address ("192.0.2.1:5432",
 * "[2001:db8::1]:5432", "unix"; "?" for NULL or WIRE_FAM_UNSPEC), into
 * ${buf} of ${len} bytes (ADDR_TEXT_MAX is enough).
 */
void proxy_origin_text(const struct wire_origin *o, char *buf, size_t len);

#endif /* !PROXY_H */
