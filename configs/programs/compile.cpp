// The C++ compile of the real-program sweep (configs/sweeps/programs.ini): g++ -O2 of this
// file. The compiler is the program measured: parsing the standard headers below and
// instantiating their templates allocates a great many small, long-lived objects (trees,
// tokens, types), and optimisation many short-lived ones.
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>

namespace bench {

template <typename K, typename V> using table = std::unordered_map<K, std::vector<V>>;

using value = std::variant<long, double, std::string, std::vector<long>>;

struct node {
    std::string name;
    std::map<std::string, value> attrs;
    std::vector<std::unique_ptr<node>> kids;
};

template <int N> struct fib { static constexpr long v = fib<N - 1>::v + fib<N - 2>::v; };
template <> struct fib<1> { static constexpr long v = 1; };
template <> struct fib<0> { static constexpr long v = 0; };

template <typename T, int N> struct deep {
    static T sum(const std::vector<T> &xs) { return deep<T, N - 1>::sum(xs) + static_cast<T>(N); }
};
template <typename T> struct deep<T, 0> {
    static T sum(const std::vector<T> &xs) { return std::accumulate(xs.begin(), xs.end(), T{}); }
};

std::unique_ptr<node> tree(int depth, int fan)
{
    auto n = std::make_unique<node>();
    n->name = "n" + std::to_string(depth);
    n->attrs["depth"] = static_cast<long>(depth);
    n->attrs["label"] = std::string(depth, 'x');
    n->attrs["ratio"] = depth / 3.0;
    n->attrs["path"] = std::vector<long>(static_cast<size_t>(depth), depth);
    if (depth > 0)
        for (int i = 0; i < fan; i++) n->kids.push_back(tree(depth - 1, fan));
    return n;
}

struct visitor {
    std::ostringstream &out;
    void operator()(long v) { out << 'l' << v; }
    void operator()(double v) { out << 'd' << v; }
    void operator()(const std::string &v) { out << 's' << v.size(); }
    void operator()(const std::vector<long> &v) { out << 'v' << v.size(); }
};

std::string dump(const node &n)
{
    std::ostringstream out;
    out << n.name << '{';
    for (const auto &[k, v] : n.attrs) {
        out << k << '=';
        std::visit(visitor{out}, v);
        out << ';';
    }
    for (const auto &k : n.kids) out << dump(*k);
    out << '}';
    return out.str();
}

template <typename... Ts> auto zip_sizes(const Ts &...xs) { return std::make_tuple(xs.size()...); }

}  // namespace bench

int main(int argc, char **argv)
{
    using namespace bench;
    std::vector<std::string> args(argv, argv + argc);
    table<std::string, int> t;
    std::set<std::string> seen;
    std::regex word("([a-z]+)([0-9]*)");
    for (const auto &a : args) {
        std::smatch m;
        if (std::regex_search(a, m, word)) t[m[1]].push_back(static_cast<int>(m[2].length()));
        seen.insert(a);
    }
    auto root = tree(4, 3);
    std::string d = dump(*root);
    std::vector<long> xs(100);
    std::iota(xs.begin(), xs.end(), 0L);
    std::sort(xs.begin(), xs.end(), std::greater<long>());
    std::map<long, std::function<long(long)>> ops{{1, [](long x) { return x + 1; }},
                                                  {2, [](long x) { return x * fib<40>::v; }}};
    auto sizes = zip_sizes(args, xs, d, seen);
    std::cout << d.size() << ' ' << deep<long, 200>::sum(xs) << ' ' << ops[2](std::get<0>(sizes))
              << ' ' << t.size() << '\n';
    return 0;
}
