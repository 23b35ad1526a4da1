#!/usr/bin/perl
# Perl over generated text (configs/programs/gen.py text): hashes of words and of word
# pairs, regular expressions, sort, sprintf, join and split; many short-lived strings and
# a few large hashes. Prints summaries only, deterministically (sorted keys).
use strict;
use warnings;

my (%count, %pair, %bylen, @long);
my $chars = 0;
while (my $line = <STDIN>) {
    chomp $line;
    my @w = split / /, $line;
    $chars += length $line;
    for my $i (0 .. $#w) {
        $count{$w[$i]}++;
        $pair{"$w[$i] $w[$i + 1]"}++ if $i < $#w;
        push @{ $bylen{length $w[$i]} }, $w[$i] if length($w[$i]) > 12;
    }
    push @long, join("|", reverse @w) if @w > 14;
    if ($line =~ /(\d+)$/) { $count{"#num"} += $1 % 97 }
    (my $t = $line) =~ s/([aeiou])([a-z])/$2$1/g;
    $count{"#swapped"} += length $t;
}
my @top = (sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count)[0 .. 29];
printf "%-20s %d\n", $_, $count{$_} for @top;
my @ptop = (sort { $pair{$b} <=> $pair{$a} || $a cmp $b } keys %pair)[0 .. 19];
printf "%-30s %d\n", $_, $pair{$_} for @ptop;
for my $l (sort { $a <=> $b } keys %bylen) {
    my %u = map { $_ => 1 } @{ $bylen{$l} };
    printf "len %d: %d words, %d distinct\n", $l, scalar @{ $bylen{$l} }, scalar keys %u;
}
my %h = map { $_ => [split /\|/, $_] } @long;
my $n = 0;
$n += scalar @{ $h{$_} } for sort keys %h;
printf "words %d, pairs %d, long lines %d (%d words), chars %d\n",
    scalar keys %count, scalar keys %pair, scalar @long, $n, $chars;
