"""Policies that never answer."""

import time


def sleeps(view, need):
    time.sleep(3600)
    return []


def busy(view, need):
    while True:
        pass


def endless(view, need):
    while True:
        yield "m1"


def memory(view, need):
    hog = []
    while True:
        hog.append(bytearray(256 * 2**20))


def big_alloc(view, need):
    return [bytearray(64 * 2**30)]
